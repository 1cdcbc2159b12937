/** The console's browser module, bundled as text (wrangler.toml [[rules]]). */
declare const source: string;
export default source;
