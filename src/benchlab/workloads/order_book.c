/*
 * order_book - applies OPS price-level updates to a two-sided order book and reads the inside
 * (best bid, best ask) after each one, with the book stored either as an array indexed by price
 * or as a balanced binary search tree keyed by price (the JayBeams analysis: array_based_order_book vs
 * map_based_order_book).
 *
 *   order_book <array|map> [OPS (default 1000000)] [seed]
 *
 * The update stream is generated in setup (not timed) from a fixed seed: a mid price doing a
 * slow random walk, each update on a random side at a distance from the mid that is usually
 * small (geometric-like, so levels near the inside are hot), with a quantity change in
 * [-100, +100]; a level whose quantity drops to 0 or below is removed. Both books apply the same
 * stream, so the checksum (sum of best bid and best ask after every update) is identical. There
 * is no matching engine: old levels stay when the mid drifts, so the book may be crossed.
 *
 *   array: one int32 quantity per price tick (PRICE_RANGE ticks per side, 256 KiB each); the
 *          best price is tracked and, when its level empties, found again by scanning away from
 *          the inside (short, because levels near the inside are dense).
 *   map:   a treap (randomised balanced BST with a fixed-seed priority stream) per side, nodes
 *          from a pool; like std::map, the best price is cached and recomputed by walking to
 *          the extreme node (O(log n)) only when its level is removed.
 */
#include "benchlab_self.h"

#define DEFAULT_OPS 1000000u
#define PRICE_RANGE 65536
#define NO_PRICE (-1)

typedef struct {
    int32_t price;
    int32_t delta;
    uint8_t side; /* 0 = bid (best is the highest price), 1 = ask (best is the lowest) */
} update_t;

/* ---- array book ----------------------------------------------------------------------- */

typedef struct {
    int32_t *qty; /* PRICE_RANGE entries */
    int32_t best;
    int direction; /* -1 for bids (scan down from the best), +1 for asks */
} array_side_t;

static void array_apply(array_side_t *s, int32_t price, int32_t delta)
{
    int32_t q = s->qty[price] + delta;
    if (q > 0) {
        s->qty[price] = q;
        if (s->best == NO_PRICE || (s->direction < 0 ? price > s->best : price < s->best))
            s->best = price;
        return;
    }
    s->qty[price] = 0;
    if (price != s->best)
        return;
    int32_t p = price + s->direction;
    while (p >= 0 && p < PRICE_RANGE && s->qty[p] == 0)
        p += s->direction;
    s->best = (p >= 0 && p < PRICE_RANGE) ? p : NO_PRICE;
}

/* ---- map book (treap) ------------------------------------------------------------------- */

typedef struct {
    int32_t price, qty;
    uint32_t priority;
    int32_t left, right; /* pool indices, -1 = none */
} node_t;

typedef struct {
    node_t *pool;
    int32_t free_head; /* free list threaded through .left */
    uint64_t rng;
} node_pool_t;

typedef struct {
    node_pool_t *pool;
    int32_t root;
    int32_t best;
    int direction;
} map_side_t;

static int32_t pool_alloc(node_pool_t *pool, int32_t price, int32_t qty)
{
    int32_t n = pool->free_head;
    if (n < 0) {
        fprintf(stderr, "order_book: node pool exhausted\n");
        exit(3);
    }
    node_t *node = &pool->pool[n];
    pool->free_head = node->left;
    node->price = price;
    node->qty = qty;
    node->priority = (uint32_t)(bl_rand_next(&pool->rng) >> 32);
    node->left = node->right = -1;
    return n;
}

static int32_t rotate_right(node_t *pool, int32_t n)
{
    int32_t l = pool[n].left;
    pool[n].left = pool[l].right;
    pool[l].right = n;
    return l;
}

static int32_t rotate_left(node_t *pool, int32_t n)
{
    int32_t r = pool[n].right;
    pool[n].right = pool[r].left;
    pool[r].left = n;
    return r;
}

/* Adds delta to the level at price (creating it if delta > 0; a non-positive delta on a missing
 * level is a no-op, as in the array book) and removes the level when it empties. Deletion
 * re-enters with delta 0 on the rotated-down node, which is still empty, until it can be
 * spliced out. Returns the new subtree root. */
static int32_t treap_apply(node_pool_t *pp, int32_t n, int32_t price, int32_t delta,
                           int *removed)
{
    node_t *pool = pp->pool;
    if (n < 0)
        return delta > 0 ? pool_alloc(pp, price, delta) : -1;
    if (price < pool[n].price) {
        int32_t child = treap_apply(pp, pool[n].left, price, delta, removed);
        pool[n].left = child;
        if (child >= 0 && pool[child].priority > pool[n].priority)
            n = rotate_right(pool, n);
        return n;
    }
    if (price > pool[n].price) {
        int32_t child = treap_apply(pp, pool[n].right, price, delta, removed);
        pool[n].right = child;
        if (child >= 0 && pool[child].priority > pool[n].priority)
            n = rotate_left(pool, n);
        return n;
    }
    pool[n].qty += delta;
    if (pool[n].qty > 0)
        return n;
    /* Delete: rotate the node down until it has at most one child, then splice it out. */
    *removed = 1;
    if (pool[n].left < 0 || pool[n].right < 0) {
        int32_t child = pool[n].left >= 0 ? pool[n].left : pool[n].right;
        pool[n].left = pp->free_head;
        pp->free_head = n;
        return child;
    }
    if (pool[pool[n].left].priority > pool[pool[n].right].priority) {
        int32_t top = rotate_right(pool, n);
        pool[top].right = treap_apply(pp, n, price, 0, removed);
        return top;
    }
    int32_t top = rotate_left(pool, n);
    pool[top].left = treap_apply(pp, n, price, 0, removed);
    return top;
}

static int32_t treap_extreme(const node_t *pool, int32_t n, int direction)
{
    if (n < 0)
        return NO_PRICE;
    for (;;) {
        int32_t next = direction < 0 ? pool[n].right : pool[n].left; /* bids: max; asks: min */
        if (next < 0)
            return pool[n].price;
        n = next;
    }
}

static void map_apply(map_side_t *s, int32_t price, int32_t delta)
{
    int removed = 0;
    s->root = treap_apply(s->pool, s->root, price, delta, &removed);
    if (removed) {
        if (price == s->best)
            s->best = treap_extreme(s->pool->pool, s->root, s->direction);
    } else if (delta > 0 &&
               (s->best == NO_PRICE || (s->direction < 0 ? price > s->best : price < s->best))) {
        s->best = price;
    }
}

/* ---- update stream ------------------------------------------------------------------------ */

static update_t *generate_updates(uint64_t ops, uint64_t seed)
{
    update_t *u = malloc(ops * sizeof *u);
    if (u == NULL) {
        fprintf(stderr, "order_book: out of memory for %" PRIu64 " updates\n", ops);
        exit(3);
    }
    uint64_t state = seed;
    int32_t mid = PRICE_RANGE / 2;
    for (uint64_t i = 0; i < ops; i++) {
        uint64_t r = bl_rand_next(&state);
        if ((r & 255) == 0) /* the mid moves by one tick every ~256 updates */
            mid += (r & 256) ? 1 : -1;
        if (mid < 1024)
            mid = 1024;
        if (mid > PRICE_RANGE - 1024)
            mid = PRICE_RANGE - 1024;
        uint8_t side = (uint8_t)((r >> 9) & 1);
        /* distance 1 + (a & b & c): three ANDed random 8-bit masks favour small distances */
        uint32_t distance = 1 + ((uint32_t)(r >> 16) & (uint32_t)(r >> 24) & (uint32_t)(r >> 32) &
                                 0xffu);
        int32_t price = side == 0 ? mid - (int32_t)distance : mid + (int32_t)distance;
        int32_t delta = (int32_t)((r >> 40) % 201) - 100;
        u[i].price = price;
        u[i].delta = delta;
        u[i].side = side;
    }
    return u;
}

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    if (argc < 2 || argc > 4 || (strcmp(argv[1], "array") != 0 && strcmp(argv[1], "map") != 0)) {
        fprintf(stderr, "usage: %s <array|map> [OPS (default %u)] [seed]\n", argv[0],
                DEFAULT_OPS);
        return 2;
    }
    int use_map = strcmp(argv[1], "map") == 0;
    uint64_t ops = bl_arg_u64(argc, argv, 2, DEFAULT_OPS, "OPS");
    uint64_t seed = bl_arg_u64(argc, argv, 3, BL_DEFAULT_SEED, "seed");
    update_t *updates = generate_updates(ops, seed);

    array_side_t array_sides[2];
    map_side_t map_sides[2];
    node_pool_t pool = {NULL, -1, BL_DEFAULT_SEED};
    if (use_map) {
        /* at most one node per price tick and side: the pool can never run out */
        pool.pool = malloc(2 * (size_t)PRICE_RANGE * sizeof *pool.pool);
        if (pool.pool == NULL) {
            fprintf(stderr, "order_book: out of memory\n");
            return 3;
        }
        for (int32_t i = 0; i < 2 * PRICE_RANGE; i++)
            pool.pool[i].left = i + 1 < 2 * PRICE_RANGE ? i + 1 : -1;
        pool.free_head = 0;
        for (int s = 0; s < 2; s++)
            map_sides[s] = (map_side_t){&pool, -1, NO_PRICE, s == 0 ? -1 : 1};
    } else {
        for (int s = 0; s < 2; s++) {
            array_sides[s].qty = calloc(PRICE_RANGE, sizeof(int32_t));
            if (array_sides[s].qty == NULL) {
                fprintf(stderr, "order_book: out of memory\n");
                return 3;
            }
            array_sides[s].best = NO_PRICE;
            array_sides[s].direction = s == 0 ? -1 : 1;
        }
    }

    bl_self_start(&self);
    uint64_t checksum = 0;
    if (use_map) {
        for (uint64_t i = 0; i < ops; i++) {
            map_apply(&map_sides[updates[i].side], updates[i].price, updates[i].delta);
            checksum += (uint64_t)(map_sides[0].best + 1) * 65537u +
                        (uint64_t)(map_sides[1].best + 1);
        }
    } else {
        for (uint64_t i = 0; i < ops; i++) {
            array_apply(&array_sides[updates[i].side], updates[i].price, updates[i].delta);
            checksum += (uint64_t)(array_sides[0].best + 1) * 65537u +
                        (uint64_t)(array_sides[1].best + 1);
        }
    }
    bl_elapsed_t e = bl_self_stop(&self);

    int32_t bid = use_map ? map_sides[0].best : array_sides[0].best;
    int32_t ask = use_map ? map_sides[1].best : array_sides[1].best;
    printf("BENCHLAB_CHECK checksum=%" PRIu64 " book=%s ops=%" PRIu64 " best_bid=%" PRId32
           " best_ask=%" PRId32 "\n",
           checksum, argv[1], ops, bid, ask);
    bl_self_report(&self, e, "");
    free(updates);
    return 0;
}
