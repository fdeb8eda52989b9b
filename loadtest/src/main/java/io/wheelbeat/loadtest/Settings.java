package io.wheelbeat.loadtest;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One load-test session's scenario, resolved from the command line and its presets. Immutable.
 *
 * @param tier local (simulated connections) or tcp
 * @param protocol what the connections speak
 * @param sizes connections per run: one size, or the scaling series
 * @param handlers the idle handlers to run, one run each per size (the baseline {@code none}
 *     included when asked for)
 * @param repeats how many times each (size, handler) run is made, interleaved
 * @param reportDir where the reports go
 * @param openRate connections opened per second during the ramp
 * @param maxPendingConnects connects in flight at most
 * @param heartbeatNanos mean heartbeat interval
 * @param jitter each interval is drawn uniformly from {@code heartbeat x (1 +/- jitter)}
 * @param burst every connection sends at the same moments, multiples of the interval
 * @param silentFraction share of connections that go silent
 * @param silenceSpreadNanos the silent connections stop at times spread over this window
 * @param readerIdleNanos the idle handler's reader-idle limit
 * @param toleranceNanos how late an idle event may be and still count as detected
 * @param heapCheckpoints full-GC heap readings during the ramp (besides the one after it)
 * @param eventLoop whose event loops the server runs on
 * @param serverThreads server event loops
 * @param clientThreads client event loops
 * @param sourceAddresses tcp: loopback source addresses the clients rotate over
 * @param progressNanos time between progress lines
 * @param seed seeds the silence plan and the jitter
 * @param jvmOptions options for the JVMs the session starts
 * @param inProcess run every handler in this JVM instead of one child JVM each
 */
record Settings(Tier tier, Protocol protocol, List<Integer> sizes, List<IdleHandlerKind> handlers, int repeats,
                Path reportDir,
                double openRate, int maxPendingConnects, long heartbeatNanos, double jitter, boolean burst,
                double silentFraction, long silenceSpreadNanos, long readerIdleNanos, long toleranceNanos,
                int heapCheckpoints, EventLoopKind eventLoop, int serverThreads, int clientThreads,
                int sourceAddresses, long progressNanos, long seed, List<String> jvmOptions, boolean inProcess) {

    Settings {
        sizes = List.copyOf(sizes);
        handlers = List.copyOf(handlers);
        jvmOptions = List.copyOf(jvmOptions);
    }

    /** The longest a talking connection ever waits between two messages. */
    long maxHeartbeatGapNanos() {
        return burst ? heartbeatNanos : Math.round(heartbeatNanos * (1 + jitter));
    }

    /** The shortest interval between two heartbeats of one connection. */
    long minHeartbeatGapNanos() {
        return burst ? heartbeatNanos : Math.round(heartbeatNanos * (1 - jitter));
    }

    SilencePlan plan() {
        return new SilencePlan(seed, silentFraction);
    }

    /** The same scenario for a single run of {@code handler} with {@code connections}. */
    Settings forRun(IdleHandlerKind handler, int connections) {
        return new Settings(tier, protocol, List.of(connections), List.of(handler), 1, reportDir, openRate,
                maxPendingConnects,
                heartbeatNanos, jitter, burst, silentFraction, silenceSpreadNanos, readerIdleNanos, toleranceNanos,
                heapCheckpoints, eventLoop, serverThreads, clientThreads, sourceAddresses, progressNanos, seed,
                jvmOptions, inProcess);
    }

    /** The connections of a single-run settings. */
    int connections() {
        return sizes.get(0);
    }

    /** The handler of a single-run settings. */
    IdleHandlerKind handler() {
        return handlers.get(0);
    }

    /** Options for a single run's JVM: this run's size and handler, no baseline, the scenario. */
    List<String> toArgs() {
        List<String> args = new ArrayList<>(List.of(
                "--connections", Integer.toString(connections()),
                "--idle-handler", handler().id(),
                "--no-baseline"));
        args.addAll(scenarioArgs());
        return args;
    }

    /**
     * Options that repeat this whole session exactly: its sizes, its handlers in their order, the
     * repeats, the scenario with the presets spelled out, and the {@code --jvm-opt}s.
     */
    List<String> sessionArgs() {
        List<String> args = new ArrayList<>();
        if (sizes.size() == 1) {
            args.addAll(List.of("--connections", Integer.toString(sizes.get(0))));
        } else {
            args.addAll(List.of("--scaling-sizes", String.join(",", sizes.stream().map(String::valueOf).toList())));
        }
        // The baseline is added last by default; anywhere else it is named in the list.
        boolean defaultBaseline = handlers.size() > 1 && handlers.get(handlers.size() - 1) == IdleHandlerKind.NONE;
        List<IdleHandlerKind> named = defaultBaseline ? handlers.subList(0, handlers.size() - 1) : handlers;
        args.addAll(List.of("--idle-handler", String.join(",", named.stream().map(IdleHandlerKind::id).toList())));
        if (!handlers.contains(IdleHandlerKind.NONE)) {
            args.add("--no-baseline");
        }
        if (repeats != 1) {
            args.addAll(List.of("--repeat", Integer.toString(repeats)));
        }
        args.addAll(scenarioArgs());
        jvmOptions.forEach(o -> args.add("--jvm-opt=" + o));
        return args;
    }

    /** The scenario's options, presets spelled out: what every run of a session shares. */
    private List<String> scenarioArgs() {
        List<String> args = new ArrayList<>(List.of(
                "--transport", tier.id(),
                "--protocol", protocol.id(),
                "--report-dir", reportDir.toString(),
                "--open-rate", openRate == Math.rint(openRate) ? Long.toString((long) openRate) : Double.toString(openRate),
                "--max-pending-connects", Integer.toString(maxPendingConnects),
                "--heartbeat", DurationConverter.format(heartbeatNanos),
                "--jitter", Double.toString(jitter),
                "--silent-fraction", Double.toString(silentFraction),
                "--silence-spread", DurationConverter.format(silenceSpreadNanos),
                "--reader-idle", DurationConverter.format(readerIdleNanos),
                "--tolerance", DurationConverter.format(toleranceNanos),
                "--heap-checkpoints", Integer.toString(heapCheckpoints),
                "--event-loop", eventLoop.id(),
                "--server-threads", Integer.toString(serverThreads),
                "--client-threads", Integer.toString(clientThreads),
                "--source-addresses", Integer.toString(sourceAddresses),
                "--progress-every", DurationConverter.format(progressNanos),
                "--seed", Long.toString(seed)));
        if (burst) {
            args.add("--burst");
        }
        return args;
    }
}
