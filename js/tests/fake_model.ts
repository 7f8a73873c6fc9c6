// The model the tests mount views on: a LocalModel that records what the view sends and saves.
import { LocalModel } from "../shared/local_model";

// Tests read any trait with any shape: the model's values are untyped here.
type Traits = Record<string, any>;

export class FakeModel extends LocalModel<Traits> {
  /** Messages sent with send(). */
  sent: any[] = [];
  saves = 0;
  /** Called on send() (e.g. to simulate a kernel). */
  onSend: ((msg: any) => void) | null = null;

  override save_changes(): void {
    this.saves++;
  }

  override send(content: any): void {
    this.sent.push(content);
    this.onSend?.(content);
  }

  /** Deliver a custom message from the "kernel". */
  emitCustom(msg: unknown, buffers: DataView[] = []): void {
    this.emit("msg:custom", msg, buffers);
  }
}
