// How close the heap is to what V8 allows it. An exploration's frontier holds the states of a
// whole level (up to about 2 kB a node), and one level can hold millions of nodes: the
// explorations look every 1,024 nodes and stop (`cutOff: 'memory'`) rather than let the process
// run out of memory.

import { getHeapStatistics } from 'node:v8';

/** Nodes expanded between two looks at the heap. */
export const HEAP_LOOK_EVERY = 1024;

/**
 * True when the heap holds three quarters of what V8 allows it (less on a small heap: the limit
 * includes the young generation, 48 MiB by default, which the old one cannot use, and the nodes
 * expanded until the next look need room).
 */
export function heapNearLimit(): boolean {
  const heap = getHeapStatistics();
  return heap.used_heap_size > Math.min(0.75 * heap.heap_size_limit, heap.heap_size_limit - 96 * 2 ** 20);
}
