// shards: the sharding rule's arithmetic.
#include "shards.h"

size_t shard_len(size_t numel, int n) { return (numel + (size_t)n - 1) / (size_t)n; }

Range shard_range(size_t numel, int r, int n) {
    size_t shard = shard_len(numel, n), first = (size_t)r * shard;
    if (first >= numel) return (Range){ numel, 0 };
    return (Range){ first, numel - first < shard ? numel - first : shard };
}
