// The saved page's state key, pinned to Python's (wire.state_key): state_key.gen.json is written
// by tests/wire/test_state_key.py. A saved page finds its answer to a request by this text.
import { describe, expect, it } from "vitest";
import { stateKey } from "../../array/state";
import type { LayoutState } from "../../wire";
import python from "./state_key.gen.json";

const table = python as [LayoutState, string][];

describe("stateKey agrees with Python's state_key", () => {
  it("the fixture covers names outside ASCII and quotes", () => {
    expect(table.some(([, key]) => key.includes("τ"))).toBe(true);
    expect(table.some(([, key]) => key.includes('a\\"b'))).toBe(true);
  });

  it("every layout in the fixture", () => {
    expect(table.map(([s]) => stateKey(s))).toEqual(table.map(([, key]) => key));
  });

  it("whatever order the state's fields come in", () => {
    const reversed = table.map(([s]) => Object.fromEntries(Object.entries(s).reverse()) as LayoutState);
    expect(reversed.map(stateKey)).toEqual(table.map(([, key]) => key));
  });
});
