package io.wheelbeat.netty.reconnect;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Micrometer meters shared by the {@link ReconnectingClient}s that are given them:
 * <ul>
 *   <li>{@code wheelbeat.reconnect.attempts} (counter, attempts): connection attempts started;</li>
 *   <li>{@code wheelbeat.reconnect.successes} (counter, attempts): attempts that connected;</li>
 *   <li>{@code wheelbeat.reconnect.failures} (counter, attempts): attempts that did not
 *       (refused, unresolved, timed out);</li>
 *   <li>{@code wheelbeat.reconnect.deferred} (counter, attempts): times an attempt waited
 *       because its {@link ReconnectGroup} had no permit free;</li>
 *   <li>{@code wheelbeat.reconnect.gave.up} (counter, clients): clients that used up their
 *       attempts;</li>
 *   <li>{@code wheelbeat.reconnect.backoff} (gauge, seconds): the longest current backoff among
 *       the clients, 0 when none is backing off. A client's current backoff is the delay of its
 *       last scheduled retry, until it proves healthy, gives up or is closed;</li>
 *   <li>{@code wheelbeat.reconnect.backoff.clients} (gauge, clients): how many clients are
 *       backing off in that sense.</li>
 * </ul>
 * Create one instance per registry and tag set, and give it to every client that should be
 * counted together (Micrometer keeps the first gauge registered under a name and tags). Tags must
 * be of low cardinality (a client role, say), never an address.
 *
 * <p>Thread-safe. The gauges walk the clients currently backing off when read.
 */
public final class ReconnectMetrics {

    private final Counter attempts;
    private final Counter successes;
    private final Counter failures;
    private final Counter deferred;
    private final Counter gaveUp;
    private final Set<ReconnectingClient> backingOff = ConcurrentHashMap.newKeySet();

    /**
     * Registers the meters in {@code registry} with {@code tags}.
     *
     * @param registry the meter registry
     * @param tags extra tags of every meter (low cardinality only)
     * @throws NullPointerException if an argument is null
     */
    public ReconnectMetrics(MeterRegistry registry, Tags tags) {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(tags, "tags");
        attempts = counter(registry, tags, "wheelbeat.reconnect.attempts", "attempts", "Connection attempts started");
        successes = counter(registry, tags, "wheelbeat.reconnect.successes", "attempts", "Attempts that connected");
        failures =
                counter(registry, tags, "wheelbeat.reconnect.failures", "attempts", "Attempts that failed to connect");
        deferred = counter(
                registry,
                tags,
                "wheelbeat.reconnect.deferred",
                "attempts",
                "Attempts deferred because the reconnect group had no permit free");
        gaveUp = counter(
                registry, tags, "wheelbeat.reconnect.gave.up", "clients", "Clients that used up their attempts");
        Gauge.builder("wheelbeat.reconnect.backoff", this, ReconnectMetrics::longestBackoffSeconds)
                .description("Longest current reconnect backoff among the clients")
                .baseUnit("seconds")
                .tags(tags)
                .strongReference(true)
                .register(registry);
        Gauge.builder("wheelbeat.reconnect.backoff.clients", backingOff, Set::size)
                .description("Clients backing off: failed since they last proved healthy")
                .baseUnit("clients")
                .tags(tags)
                .strongReference(true)
                .register(registry);
    }

    private static Counter counter(MeterRegistry registry, Tags tags, String name, String unit, String description) {
        return Counter.builder(name)
                .description(description)
                .baseUnit(unit)
                .tags(tags)
                .register(registry);
    }

    private double longestBackoffSeconds() {
        long longest = 0;
        for (ReconnectingClient client : backingOff) {
            longest = Math.max(longest, client.currentBackoffNanos());
        }
        return longest / 1e9;
    }

    void attemptStarted() {
        attempts.increment();
    }

    void attemptSucceeded() {
        successes.increment();
    }

    void attemptFailed() {
        failures.increment();
    }

    void attemptDeferred() {
        deferred.increment();
    }

    void gaveUp() {
        gaveUp.increment();
    }

    void backingOff(ReconnectingClient client) {
        backingOff.add(client);
    }

    void notBackingOff(ReconnectingClient client) {
        backingOff.remove(client);
    }
}
