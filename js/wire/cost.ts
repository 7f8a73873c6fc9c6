// The cost wire format (issue 12): hardware presets, estimates, and what a re-layout moves.
// The Python twin is src/shardwidget/wire/cost.py (HardwareWire, EstimatePart, EstimateWire,
// TransferWire); keep the two in step.
//
// Synced traits on both views: `hardware` (string, both directions: the dropdown's choice) and
// `_hardware_presets` (HardwareWire[]). Array view: `_transfer` (TransferWire, key === _layout.key).
// Function view: `_estimate` (EstimateWire, key === _trace.key). Each is `{}` until published.

import type { Collective } from "./shared";

export interface HardwareWire {
  /** Preset name, e.g. "tpu-v5p", "h100", "local", or a user preset's name. */
  name: string;
  label: string;
  /** FLOP/s per device, dense bf16. */
  peak_flops: number;
  /** HBM bytes per device. */
  hbm_bytes: number;
  /** HBM bytes/s per device. */
  hbm_bandwidth: number;
  /** Bytes/s one device sends over one mesh axis in a collective (TPU ICI, GPU NVLink). */
  ici_bandwidth: number;
  /** Seconds per collective step over ICI (TPU) / NVLink (GPU). */
  ici_latency: number;
  /** Seconds per collective step over an axis that crosses slices or hosts (DCN). */
  dcn_latency: number;
  /** Where the numbers come from (URLs), or how "local" was measured. */
  source: string;
}

export interface EstimatePart {
  kind: "compute" | "memory" | "collective" | "transfer";
  /** "compute", "memory", "all-gather over x", "point-to-point", … */
  label: string;
  seconds: number;
  /** Index into the collectives it comes from (Trace.collectives or TransferWire.collectives); -1 if none. */
  collective: number;
  /** The formula with its numbers, for a tooltip. */
  formula: string;
  /** The part of `seconds` that is steps × latency (0 for compute and memory). */
  latency_s: number;
}

export interface EstimateWire {
  /** The _trace / _layout key it belongs to. */
  key: number;
  hardware: string;
  /** One bar each: compute, memory, then each collective (or transfer), in that order. */
  parts: EstimatePart[];
  /** Seconds, combined as `overlap` says. */
  total_s: number;
  overlap: string;
  bound: "compute" | "memory" | "communication" | "";
  /** Peak bytes per device <= HBM; null when XLA gave no memory analysis. */
  fits: boolean | null;
  /** "fits in HBM (1.2 of 95 GiB)" or "does not fit in HBM (…)"; "" when unknown. */
  fits_text: string;
  peak_bytes: number;
  hbm_bytes: number;
}

export interface TransferWire {
  /** === _layout.key of the layout it belongs to. */
  key: number;
  /** "none": the shown layout is the original (nothing to move). */
  status: "none" | "pending" | "ready" | "unavailable";
  /** Why unavailable, else "". */
  message: string;
  /** The "moved" line: "all-to-all over y · 2 MiB per device". */
  line: string;
  /** Bytes received, all devices together. */
  total: number;
  /** Bytes in per device, parallel to _layout.devices.ids. */
  received: number[];
  /** Bytes out per device, parallel to _layout.devices.ids. */
  sent: number[];
  /** [sender id, receiver id, bytes] (who sends to whom). */
  pairs: [number, number, number][];
  /** Pairs beyond the cap (4 × n_devices) that were not sent. */
  pairs_left_out: number;
  /** What XLA compiles for this reshard; [] when none. */
  collectives: Collective[];
  /** The collectives' distinct device groups (device ids); Collective.group_set indexes it,
   *  as Trace.group_sets does for the function view. */
  group_sets: number[][][];
  /** For the chosen hardware; null while pending or when status is "none". */
  estimate: EstimateWire | null;
}
