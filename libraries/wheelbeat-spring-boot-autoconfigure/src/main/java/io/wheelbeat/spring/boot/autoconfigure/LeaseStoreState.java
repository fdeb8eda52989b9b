package io.wheelbeat.spring.boot.autoconfigure;

import io.wheelbeat.core.ratelimit.LeaseStore;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Whether the limiters shared through a {@link LeaseStore} decide from the store or by their
 * {@code StoreFailurePolicy}, found by one {@link LeaseStore#probe probe}: a store that does not
 * answer, or answers with an error, leaves every decision that needs it to the failure policy. A
 * store that is merely {@link LeaseStore.Failure#BUSY busy} still decides. This is the one fact
 * the health indicators of the Boot 3 and Boot 4 modules report: {@code UP} while every store
 * decides, {@value #DEGRADED} while one leaves its limiters to their failure policy.
 *
 * @param failure why the store failed the probe, or null when it answered
 */
public record LeaseStoreState(LeaseStore.Failure failure) {

    /** The status a health indicator reports while the limiters decide by their failure policy. */
    public static final String DEGRADED = "DEGRADED";

    /** How long a health check waits for a store's answer. */
    public static final Duration PROBE_WAIT = Duration.ofSeconds(5);

    /**
     * Probes every store, one after the other.
     *
     * @param stores the stores by bean name
     * @return their states, in the same order
     */
    public static Map<String, LeaseStoreState> probeAll(Map<String, ? extends LeaseStore> stores) {
        Map<String, LeaseStoreState> states = new LinkedHashMap<>();
        stores.forEach((name, store) -> states.put(name, probe(store, PROBE_WAIT)));
        return states;
    }

    /**
     * Whether one of {@code states} decides by its failure policy.
     *
     * @param states the states of the stores
     * @return true if any does
     */
    public static boolean anyDecidesByFailurePolicy(Map<String, LeaseStoreState> states) {
        return states.values().stream().anyMatch(LeaseStoreState::decidesByFailurePolicy);
    }

    /**
     * Probes {@code store}, waiting at most {@code wait} for its answer (a store answers within
     * its own timeout; a longer wait counts as {@link LeaseStore.Failure#TIMEOUT}).
     *
     * @param store the store to probe
     * @param wait how long to wait for the answer
     * @return the store's state
     */
    public static LeaseStoreState probe(LeaseStore store, Duration wait) {
        CompletableFuture<LeaseStore.Failure> answer = new CompletableFuture<>();
        store.probe(new LeaseStore.Reply() {
            @Override
            public void granted(long permits, long validNanos, long retryAfterNanos) {
                answer.complete(null);
            }

            @Override
            public void failed(LeaseStore.Failure cause) {
                answer.complete(cause == LeaseStore.Failure.BUSY ? null : cause);
            }
        });
        try {
            return new LeaseStoreState(answer.get(wait.toNanos(), TimeUnit.NANOSECONDS));
        } catch (TimeoutException e) {
            return new LeaseStoreState(LeaseStore.Failure.TIMEOUT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new LeaseStoreState(LeaseStore.Failure.TIMEOUT);
        } catch (ExecutionException e) {
            return new LeaseStoreState(LeaseStore.Failure.ERROR); // complete(...) only: cannot happen
        }
    }

    /**
     * Whether the limiters decide by their failure policy.
     *
     * @return true when the probe failed
     */
    public boolean decidesByFailurePolicy() {
        return failure != null;
    }

    /**
     * The state in words, for a health detail.
     *
     * @return what decides, and why
     */
    public String description() {
        return failure == null ? "deciding from the store" : "deciding by the failure policy: " + failure;
    }
}
