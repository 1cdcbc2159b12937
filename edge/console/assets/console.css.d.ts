/** The console's stylesheet, bundled as text (wrangler.toml [[rules]]). */
declare const source: string;
export default source;
