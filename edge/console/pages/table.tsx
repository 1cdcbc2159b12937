import type { Child } from "hono/jsx";

/** A table the browser script fills row by row: its column headers, and an optional caption that describes it to screen readers. */
export function ScrollTable(props: { id: string; columns: Child[]; caption?: { id: string; text: string } }) {
  return (
    <div class="scroll">
      <table id={props.id} aria-describedby={props.caption?.id}>
        {props.caption && <caption id={props.caption.id} class="sr-only">{props.caption.text}</caption>}
        <thead><tr>{props.columns.map((column) => <th scope="col">{column}</th>)}</tr></thead>
        <tbody></tbody>
      </table>
    </div>
  );
}
