package io.wheelbeat.loadtest;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * One load-test session's scenario, resolved from the command line and its presets. Immutable.
 *
 * <p>A session compares arms ({@link Arm}) side by side in one JVM: one server per arm, each with
 * its own event loops, the connections dealt to the arms in equal consecutive shares. Either the
 * idle handlers are compared (one arm per handler, all on {@code eventLoops.get(0)}) or, with two
 * event loops, the loops are (one arm per loop, each with {@code handlers.get(0)}, and where the
 * handlers end with {@code none} the baseline arm on Netty's loops).
 *
 * @param tier local (simulated connections) or tcp
 * @param protocol what the connections speak
 * @param sizes connections per round, over all arms: one size, or the scaling series
 * @param handlers the idle handlers (the baseline {@code none} included when asked for)
 * @param eventLoops the server's event loops: one, or two to compare them
 * @param rounds how many rounds (one JVM each) per size; round r deals the arms in an order
 *     rotated by r - 1
 * @param round in a round's own settings, which round it is (from 1); 0 for a whole session
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
 * @param steadyWindows sub-windows of the steady window, in which CPU is measured
 * @param windowNanos the length of one sub-window
 * @param serverThreads event loops of each arm's server
 * @param clientThreads client event loops
 * @param sourceAddresses tcp: loopback source addresses the clients rotate over
 * @param progressNanos time between progress lines
 * @param seed seeds the silence plan and the jitter
 * @param jvmOptions options for the JVMs the session starts
 * @param inProcess run every round in this JVM instead of one child JVM each
 */
record Settings(
        Tier tier,
        Protocol protocol,
        List<Integer> sizes,
        List<IdleHandlerKind> handlers,
        List<EventLoopKind> eventLoops,
        int rounds,
        int round,
        Path reportDir,
        double openRate,
        int maxPendingConnects,
        long heartbeatNanos,
        double jitter,
        boolean burst,
        double silentFraction,
        long silenceSpreadNanos,
        long readerIdleNanos,
        long toleranceNanos,
        int steadyWindows,
        long windowNanos,
        int serverThreads,
        int clientThreads,
        int sourceAddresses,
        long progressNanos,
        long seed,
        List<String> jvmOptions,
        boolean inProcess) {

    Settings {
        sizes = List.copyOf(sizes);
        handlers = List.copyOf(handlers);
        eventLoops = List.copyOf(eventLoops);
        jvmOptions = List.copyOf(jvmOptions);
    }

    /** Whether the session compares event loops (one handler) rather than idle handlers. */
    boolean comparesLoops() {
        return eventLoops.size() > 1;
    }

    /** The arms in the order of round 1. */
    List<Arm> baseArms() {
        List<Arm> arms = new ArrayList<>();
        if (comparesLoops()) {
            for (EventLoopKind loop : eventLoops) {
                arms.add(new Arm(handlers.get(0), loop, loop.id() + "-loop"));
            }
            if (handlers.size() > 1) {
                arms.add(new Arm(IdleHandlerKind.NONE, EventLoopKind.NETTY, IdleHandlerKind.NONE.id()));
            }
        } else {
            for (IdleHandlerKind handler : handlers) {
                arms.add(new Arm(handler, eventLoops.get(0), handler.id()));
            }
        }
        return arms;
    }

    /** The arms in this round's order: round 1's rotated left by {@code round - 1}. */
    List<Arm> arms() {
        List<Arm> arms = new ArrayList<>(baseArms());
        Collections.rotate(arms, -Math.max(0, round - 1));
        return arms;
    }

    /** The arm compared as ours: wheelbeat's handler, or wheelbeat's loop group. */
    String ours() {
        return comparesLoops() ? EventLoopKind.WHEEL.id() + "-loop" : IdleHandlerKind.WHEEL.id();
    }

    /** The arm compared as theirs: Netty's handler, or Netty's loop group. */
    String theirs() {
        return comparesLoops() ? EventLoopKind.NETTY.id() + "-loop" : IdleHandlerKind.NETTY.id();
    }

    /** Which of {@code arms} arms connection {@code index} of {@code connections} goes to: equal consecutive shares. */
    static int armOf(int index, int arms, int connections) {
        return (int) ((long) index * arms / connections);
    }

    /** The first connection index of arm {@code arm}'s share; arm {@code arms} gives the end of the last share. */
    static int firstOf(int arm, int arms, int connections) {
        return (int) ((connections * (long) arm + arms - 1) / arms);
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

    /** The same scenario for round {@code round} with {@code connections}. */
    Settings forRound(int connections, int round) {
        return new Settings(
                tier,
                protocol,
                List.of(connections),
                handlers,
                eventLoops,
                1,
                round,
                reportDir,
                openRate,
                maxPendingConnects,
                heartbeatNanos,
                jitter,
                burst,
                silentFraction,
                silenceSpreadNanos,
                readerIdleNanos,
                toleranceNanos,
                steadyWindows,
                windowNanos,
                serverThreads,
                clientThreads,
                sourceAddresses,
                progressNanos,
                seed,
                jvmOptions,
                inProcess);
    }

    /** The connections of a round's settings. */
    int connections() {
        return sizes.get(0);
    }

    /** Options for a round's JVM: this round's size, its arms, no baseline added, the scenario. */
    List<String> toArgs() {
        List<String> args = new ArrayList<>(List.of(
                "--connections",
                Integer.toString(connections()),
                "--idle-handler",
                String.join(",", handlers.stream().map(IdleHandlerKind::id).toList()),
                "--no-baseline",
                "--repeat",
                Integer.toString(rounds),
                "--round",
                Integer.toString(round)));
        args.addAll(scenarioArgs());
        return args;
    }

    /**
     * Options that repeat this whole session exactly: its sizes, its handlers in their order, the
     * rounds, the scenario with the presets spelled out, and the {@code --jvm-opt}s.
     */
    List<String> sessionArgs() {
        List<String> args = new ArrayList<>();
        if (sizes.size() == 1) {
            args.addAll(List.of("--connections", Integer.toString(sizes.get(0))));
        } else {
            args.addAll(List.of(
                    "--scaling-sizes",
                    String.join(",", sizes.stream().map(String::valueOf).toList())));
        }
        // The baseline is added last by default; anywhere else it is named in the list.
        boolean defaultBaseline = handlers.size() > 1 && handlers.get(handlers.size() - 1) == IdleHandlerKind.NONE;
        List<IdleHandlerKind> named = defaultBaseline ? handlers.subList(0, handlers.size() - 1) : handlers;
        args.addAll(List.of(
                "--idle-handler",
                String.join(",", named.stream().map(IdleHandlerKind::id).toList())));
        if (!handlers.contains(IdleHandlerKind.NONE)) {
            args.add("--no-baseline");
        }
        args.addAll(List.of("--repeat", Integer.toString(rounds)));
        args.addAll(scenarioArgs());
        jvmOptions.forEach(o -> args.add("--jvm-opt=" + o));
        return args;
    }

    /** The scenario's options, presets spelled out: what every round of a session shares. */
    private List<String> scenarioArgs() {
        List<String> args = new ArrayList<>(List.of(
                "--transport", tier.id(),
                "--protocol", protocol.id(),
                "--report-dir", reportDir.toString(),
                "--open-rate",
                        openRate == Math.rint(openRate) ? Long.toString((long) openRate) : Double.toString(openRate),
                "--max-pending-connects", Integer.toString(maxPendingConnects),
                "--heartbeat", DurationConverter.format(heartbeatNanos),
                "--jitter", Double.toString(jitter),
                "--silent-fraction", Double.toString(silentFraction),
                "--silence-spread", DurationConverter.format(silenceSpreadNanos),
                "--reader-idle", DurationConverter.format(readerIdleNanos),
                "--tolerance", DurationConverter.format(toleranceNanos),
                "--steady-windows", Integer.toString(steadyWindows),
                "--window", DurationConverter.format(windowNanos),
                "--event-loop",
                        String.join(
                                ",", eventLoops.stream().map(EventLoopKind::id).toList()),
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
