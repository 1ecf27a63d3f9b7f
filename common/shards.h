// shards: the course's sharding rule, the arithmetic every sharded thing on
// disk shares. A layer's flat segment of numel elements is padded to a
// multiple of N and cut in N equal slots; rank r owns slot r, and holds the
// real elements in it. Since a slice is a function of numel, r and N alone,
// any range of any layer can be found in the files saved at any N.
#ifndef SHARDS_H
#define SHARDS_H

#include <stddef.h>

// Elements [first, first + count) of a segment.
typedef struct { size_t first, count; } Range;

// ceil(numel/N): the length of every rank's slot of a segment of numel
// elements cut in N (the last slots may be partly or wholly padding).
size_t shard_len(size_t numel, int n);
// Rank r of N's slice of a segment of numel elements: it starts at
// r x ceil(numel/N) and holds the real elements there (none past the end).
Range shard_range(size_t numel, int r, int n);

#endif
