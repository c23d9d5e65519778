"""Incremental imports: parse what changed (in worker processes), add new and changed
passages, drop the ones a rewritten source no longer has, then index.

A unit (a session file, a conversation) is skipped when its stamp (size and mtime, or the
export's update time) is unchanged. Inside a changed unit, a passage is written only when its
text is new or different; re-running an import is cheap and adds nothing twice.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from madeleine.importers import chatgpt, claude_code
from madeleine.importers.passages import Passage
from madeleine.records import AddResult
from madeleine.store.ports import ImportRepository

Progress = Callable[[str, int], None]  # (stage, amount): stage "parse" (units), "index" (turns)


class ImportTarget(Protocol):
    """What an import writes through: the public write path, so imported passages get the
    same PII handling, dedupe and indexing as any message."""

    def add(
        self, messages: list[dict[str, Any]], *, user_id: str, session_id: str
    ) -> AddResult: ...

    def delete_message(self, message_id: str, *, user_id: str) -> bool: ...

    def index_pending(self, progress: Callable[[int], None] | None = None) -> int: ...


_INLINE_BELOW = 4  # fewer changed files than this are parsed in this process
_ADD_CHUNK = 200


@dataclass(slots=True)
class ImportReport:
    source: str
    units: int = 0
    changed: int = 0
    added: int = 0
    duplicates: int = 0  # passages already in memory (the same session in another file)
    updated: int = 0
    removed: int = 0
    unchanged_passages: int = 0
    skipped_lines: int = 0
    indexed: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        return (
            f"{self.source}: {self.units} units, {self.changed} new or changed; passages "
            f"+{self.added} added, {self.updated} updated, {self.removed} removed, "
            f"{self.duplicates} already present, "
            f"{self.unchanged_passages} unchanged; {self.indexed} indexed; "
            f"{self.skipped_lines} malformed lines or conversations skipped; "
            f"{self.seconds:.1f} s"
        )


def import_claude_code(
    target: ImportTarget,
    log: ImportRepository,
    directory: Path,
    *,
    user_id: str,
    workers: int | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    started = time.perf_counter()
    report = ImportReport(claude_code.SOURCE)
    files = claude_code.session_files(directory)
    report.units = len(files)
    stamps = {str(path): _file_stamp(path) for path in files}
    previous = {str(p): log.get(user_id, claude_code.SOURCE, str(p)) for p in files}
    changed = [p for p in files if _stamp_of(previous[str(p)]) != stamps[str(p)]]
    report.changed = len(changed)
    owners = log.owners(user_id, claude_code.SOURCE)
    _advance(progress, report.units - report.changed)
    for parsed in _parse_all(changed, workers):
        report.skipped_lines += parsed.skipped_lines
        extra: dict[str, object] = {"file": parsed.path}
        if parsed.cwd:
            extra["cwd"] = parsed.cwd
        project = claude_code.project_name(parsed.path, parsed.cwd)
        if project:
            extra["project"] = project
        _write_unit(
            target,
            log,
            user_id,
            claude_code.SOURCE,
            (parsed.path, stamps[parsed.path], previous[parsed.path]),
            _own_ids(parsed.passages, parsed.path, owners),
            extra,
            report,
            owners,
        )
        _advance(progress, 1)
    return _finish(target, report, started, progress)


def import_chatgpt(
    target: ImportTarget,
    log: ImportRepository,
    path: Path,
    *,
    user_id: str,
    progress: Progress | None = None,
) -> ImportReport:
    started = time.perf_counter()
    report = ImportReport(chatgpt.SOURCE)
    conversations = chatgpt.load_export(path)
    report.units = len(conversations)
    for raw in conversations:
        _advance(progress, 1)
        try:
            conversation = chatgpt.parse_conversation(raw)
        except ValueError:
            report.skipped_lines += 1  # a conversation with no id or title: nothing to key it by
            continue
        stamp = f"{conversation.updated:.6f}:{len(conversation.passages)}"
        previous = log.get(user_id, chatgpt.SOURCE, conversation.id)
        if _stamp_of(previous) == stamp:
            continue
        report.changed += 1
        extra = {"conversation": conversation.id, "title": conversation.title}
        _write_unit(
            target,
            log,
            user_id,
            chatgpt.SOURCE,
            (conversation.id, stamp, previous),
            conversation.passages,
            extra,
            report,
        )
    return _finish(target, report, started, progress)


def _write_unit(
    target: ImportTarget,
    log: ImportRepository,
    user_id: str,
    source: str,
    unit: tuple[str, str, tuple[str, dict[str, str]] | None],
    found: list[Passage],
    extra: Mapping[str, object],
    report: ImportReport,
    owners: dict[str, tuple[str, str]] | None = None,
) -> None:
    """Add what is new, replace what changed, delete what the unit no longer has (unless
    another unit in ``owners`` still holds the same text), then record the unit.
    ``unit``: (name, stamp now, what the log held for it)."""
    name, stamp, previous = unit
    known = {} if previous is None else previous[1]
    digests: dict[str, str] = {}
    fresh: list[Passage] = []
    replaced = 0
    for passage in found:
        digests[passage.id] = passage.digest
        seen = known.get(passage.id)
        if seen == passage.digest:
            report.unchanged_passages += 1
            continue
        if seen is not None:
            target.delete_message(passage.id, user_id=user_id)  # grown since: replace it
            replaced += 1
        fresh.append(passage)
    report.updated += replaced
    gone_ids = set(known) - set(digests)
    # what other units hold: read only when this unit dropped passages (a whole-import scan)
    held = (
        {digest for other, digest in (owners or {}).values() if other != name}
        if gone_ids
        else set()
    )
    for gone in gone_ids:
        if known[gone] in held:
            continue  # the same text is still in another file: it stays in memory
        if target.delete_message(gone, user_id=user_id):
            report.removed += 1
    added = 0
    for session_id, group in _by_session(fresh):
        for start in range(0, len(group), _ADD_CHUNK):
            chunk = group[start : start + _ADD_CHUNK]
            result = target.add(
                [p.message(source, extra) for p in chunk], user_id=user_id, session_id=session_id
            )
            added += len(result.added)
            report.duplicates += len(result.duplicates)
    report.added += max(0, added - replaced)  # replaced passages are counted as updated
    log.put(user_id, source, name, stamp, digests)


def _own_ids(found: list[Passage], unit: str, owners: dict[str, tuple[str, str]]) -> list[Passage]:
    """Passage ids are unique across the whole import: the same session in two files (a
    backup copy inside the folder) or two records without a uuid would otherwise share an id,
    and re-importing one file would delete the other's passages. An id another unit holds
    gets this unit's mark; repeats inside the unit are numbered."""
    mark = hashlib.sha256(unit.encode("utf-8")).hexdigest()[:8]
    seen: dict[str, int] = {}
    owned: list[Passage] = []
    for passage in found:
        passage_id = passage.id
        holder = owners.get(passage_id)
        if holder is not None and holder[0] != unit:
            passage_id = f"{passage_id}@{mark}"
        seen[passage_id] = seen.get(passage_id, 0) + 1
        if seen[passage_id] > 1:
            passage_id = f"{passage_id}#{seen[passage_id]}"
        owners[passage_id] = (unit, passage.digest)
        owned.append(replace(passage, id=passage_id))
    return owned


def _finish(
    target: ImportTarget, report: ImportReport, started: float, progress: Progress | None
) -> ImportReport:
    """Index what the import logged and stamp the report."""
    report.indexed = target.index_pending(
        None if progress is None else (lambda n: progress("index", n))
    )
    report.seconds = time.perf_counter() - started
    return report


def _advance(progress: Progress | None, units: int) -> None:
    if progress is not None and units:
        progress("parse", units)


def _stamp_of(previous: tuple[str, dict[str, str]] | None) -> str | None:
    return None if previous is None else previous[0]


def _by_session(found: Iterable[Passage]) -> list[tuple[str, list[Passage]]]:
    grouped: dict[str, list[Passage]] = {}
    for passage in found:
        grouped.setdefault(passage.session_id, []).append(passage)
    return list(grouped.items())


def _parse_all(files: list[Path], workers: int | None) -> Iterable[claude_code.ParsedFile]:
    if len(files) < _INLINE_BELOW or workers == 1:
        return (claude_code.parse_file(path) for path in files)
    # spawn, not fork: this process runs threads (the embedder, the background worker)
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    return _drain(pool, files)


def _drain(pool: ProcessPoolExecutor, files: list[Path]) -> Iterable[claude_code.ParsedFile]:
    with pool:
        yield from pool.map(claude_code.parse_file, files, chunksize=4)


def _file_stamp(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"
