// A hash router: `#/users/alex/profile?as_of=...` → {parts: ["users","alex","profile"], params}.
import { useEffect, useState } from "preact/hooks";

export function parseHash(hash) {
  const raw = (hash || "").replace(/^#/, "");
  const [path, search = ""] = raw.split("?");
  const parts = path
    .split("/")
    .filter(Boolean)
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  return { parts, params: new URLSearchParams(search) };
}

export function href(parts, params) {
  const path = "#/" + parts.map((p) => encodeURIComponent(p)).join("/");
  const search = params ? new URLSearchParams(params).toString() : "";
  return search ? `${path}?${search}` : path;
}

export function navigate(parts, params) {
  window.location.hash = href(parts, params).slice(1);
}

export function useRoute() {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const changed = () => setRoute(parseHash(window.location.hash));
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return route;
}
