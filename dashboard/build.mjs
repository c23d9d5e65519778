// Bundles src/ into ../src/madeleine/server/dashboard/ (index.html, app.js, app.css):
// everything the dashboard needs, minified, nothing fetched at run time.
// `node build.mjs` builds once; `node build.mjs --watch` rebuilds on change.
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "src", "madeleine", "server", "dashboard");
mkdirSync(out, { recursive: true });
// chunks are named by their content: drop the previous build's
for (const name of readdirSync(out)) {
  if (/^chunk-.*\.js$/.test(name) || name.endsWith(".map")) rmSync(join(out, name));
}

const options = {
  entryPoints: [join(here, "src", "main.jsx")],
  outdir: out,
  entryNames: "app",
  chunkNames: "chunk-[hash]",
  splitting: true, // the graph viewer (Cytoscape) is a chunk of its own, loaded on demand
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "eof",
  charset: "utf8",
  define: { "process.env.NODE_ENV": '"production"' },
  logLevel: "info",
  metafile: true,
};

const copyHtml = () => copyFileSync(join(here, "src", "index.html"), join(out, "index.html"));

if (process.argv.includes("--watch")) {
  const context = await esbuild.context({
    ...options,
    plugins: [{ name: "html", setup: (build) => build.onEnd(copyHtml) }],
  });
  await context.watch();
  console.log(`watching src/, writing ${out}`);
} else {
  const result = await esbuild.build(options);
  copyHtml();
  for (const [file, info] of Object.entries(result.metafile.outputs)) {
    console.log(`${file.split("/").slice(-1)[0]}: ${(info.bytes / 1024).toFixed(1)} KiB`);
  }
}
