/** The "Deliver outputs to your storage" fields of the composer and the presets page: one of the user's destinations and a mode. */
import { api } from "./api";
import { $, el } from "./dom";
import type { Destination, DestinationList } from "./types";

type Chosen = { id: string; mode: "copy" | "only" };

let listed: Promise<Destination[]> | undefined;

/** The user's destinations, read once per page; none when they cannot be read (the fields stay hidden). */
function myDestinations(): Promise<Destination[]> {
  // Unreadable (a network error): the task is submitted without one, as by a user who has none.
  listed ??= api<DestinationList>("/v1/destinations").then((list) => list.destinations, () => []);
  return listed;
}

/** Fills the picker `id`, choosing `chosen`; shown only when the user has a destination. */
export async function fillDestinationPicker(id: string, noneLabel: string, chosen?: Chosen | null): Promise<void> {
  const destinations = await myDestinations();
  $(`#${id}-fieldset`).hidden = destinations.length === 0;
  $(`#${id}`).replaceChildren(
    el("option", { value: "" }, noneLabel),
    ...destinations.map((destination) => el("option", { value: destination.id, selected: destination.id === chosen?.id }, `${destination.name} (${destination.bucket})`)),
  );
  $<HTMLSelectElement>(`#${id}-mode`).value = chosen?.mode ?? "copy";
}

/** The destination picked in `id`, as POST /v1/tasks and the presets take it; undefined for none. */
export function chosenDestination(id: string): Chosen | undefined {
  const value = $<HTMLSelectElement>(`#${id}`).value;
  return value ? { id: value, mode: $<HTMLSelectElement>(`#${id}-mode`).value === "only" ? "only" : "copy" } : undefined;
}

/** "archive (copy)": where a preset delivers, by the destination's name (its id if it is not among the user's). */
export async function destinationLabel(chosen: Chosen | null | undefined): Promise<string> {
  if (!chosen) return "—";
  const found = (await myDestinations()).find((destination) => destination.id === chosen.id);
  return `${found?.name ?? chosen.id} (${chosen.mode})`;
}
