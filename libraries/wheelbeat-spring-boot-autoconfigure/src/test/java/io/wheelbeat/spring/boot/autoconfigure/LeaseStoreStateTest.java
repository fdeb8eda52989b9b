package io.wheelbeat.spring.boot.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.wheelbeat.core.ratelimit.LeaseStore;
import io.wheelbeat.ratelimit.redis.RedisLeaseStore;
import io.wheelbeat.ratelimit.redis.RedisProcess;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * What the health indicators report for a real Redis: deciding from the store while it answers,
 * by the failure policy while it is down, from the store again once it is back (Lettuce
 * reconnects on its own). Waits are generous and never the verdict.
 */
class LeaseStoreStateTest {

    @Test
    void decidesFromRedisWhileItAnswersAndByThePolicyWhileItIsDown() throws Exception {
        try (RedisProcess redis = new RedisProcess()) {
            try (RedisLeaseStore store = RedisLeaseStore.builder(redis.uri())
                    .timeout(Duration.ofMillis(300))
                    .build()) {
                LeaseStoreState up = LeaseStoreState.probe(store, Duration.ofSeconds(10));
                assertNull(up.failure());
                assertFalse(up.decidesByFailurePolicy());
                assertEquals("deciding from the store", up.description());

                redis.kill();
                LeaseStoreState down = LeaseStoreState.probe(store, Duration.ofSeconds(10));
                assertTrue(down.decidesByFailurePolicy(), down.toString());
                assertTrue(down.description().startsWith("deciding by the failure policy: "), down.description());
                assertTrue(LeaseStoreState.anyDecidesByFailurePolicy(Map.of("up", up, "down", down)));

                redis.start();
                LeaseStoreState back = down;
                for (long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                        back.decidesByFailurePolicy() && System.nanoTime() - deadline < 0;
                        Thread.sleep(100)) {
                    back = LeaseStoreState.probe(store, Duration.ofSeconds(10));
                }
                assertFalse(back.decidesByFailurePolicy(), "still " + back + " 30 s after Redis came back");
            }
        }
    }

    @Test
    void aStoreThatNeverAnswersCountsAsTimedOut() {
        assertEquals(
                LeaseStore.Failure.TIMEOUT,
                LeaseStoreState.probe(probing(reply -> {}), Duration.ofMillis(1))
                        .failure());
    }

    @Test
    void aBusyStoreStillDecides() {
        LeaseStore busy = probing(reply -> reply.failed(LeaseStore.Failure.BUSY));
        assertFalse(LeaseStoreState.probe(busy, Duration.ofSeconds(1)).decidesByFailurePolicy());
    }

    /** A store whose probes {@code probe} answers; it is sent nothing else. */
    private static LeaseStore probing(Consumer<LeaseStore.Reply> probe) {
        return new LeaseStore() {
            @Override
            public Object storeKey(String limiterName, Object key) {
                return key;
            }

            @Override
            public void send(Request request, Reply reply) {
                throw new AssertionError("only probed");
            }

            @Override
            public void probe(Reply reply) {
                probe.accept(reply);
            }
        };
    }
}
