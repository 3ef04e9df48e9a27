/** A FIFO with O(1) push, shift and unshift: LiteTopic backlogs reach thousands. */
export class Deque<T> {
  private items: (T | undefined)[] = new Array(4);
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.items[(this.head + this.count) % this.items.length] = item;
    this.count++;
  }

  unshift(item: T): void {
    if (this.count === this.items.length) this.grow();
    this.head = (this.head - 1 + this.items.length) % this.items.length;
    this.items[this.head] = item;
    this.count++;
  }

  shift(): T | undefined {
    if (this.count === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) % this.items.length;
    this.count--;
    return item;
  }

  peek(): T | undefined {
    return this.count === 0 ? undefined : this.items[this.head];
  }

  private grow(): void {
    const next = new Array<T | undefined>(this.items.length * 2);
    for (let i = 0; i < this.count; i++) next[i] = this.items[(this.head + i) % this.items.length];
    this.items = next;
    this.head = 0;
  }
}
