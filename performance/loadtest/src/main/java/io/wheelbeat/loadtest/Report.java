package io.wheelbeat.loadtest;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The session's report: {@code report.json} (every number), {@code report.md} (the verdict
 * first, then the side-by-side tables, the charts, and what each number counts) and the PNG
 * charts, in the report directory.
 */
final class Report {

    static final String JSON_FILE = "report.json";
    static final String MARKDOWN_FILE = "report.md";

    private final Settings settings;
    private final List<RunResult> runs;
    private final List<IdleMachinery> idleMachinery;
    private final List<VerdictTable> verdicts;

    Report(Settings settings, List<RunResult> runs) {
        this.settings = settings;
        this.runs = List.copyOf(runs);
        this.idleMachinery = idleMachinery(runs);
        this.verdicts = settings.sizes().stream()
                .flatMap(size -> VerdictTable.of(size, this.runs, settings.ours(), settings.theirs()).stream())
                .toList();
    }

    static ObjectMapper json() {
        return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    }

    static void writeRuns(List<RunResult> runs, Path file) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        json().writeValue(file.toFile(), runs);
    }

    /**
     * What the idle machinery itself costs at one size: a handler's run minus the baseline run
     * without a handler, same scenario, same number of connections.
     *
     * @param round the repeat both runs belong to
     * @param bytesPerConnection live objects' bytes per connection, handler minus baseline
     * @param serverLoopNanosPerMessage steady server-loop CPU per message, handler minus baseline
     */
    record IdleMachinery(
            String handler, int connections, int round, double bytesPerConnection, double serverLoopNanosPerMessage) {}

    /**
     * One row of a verdict table, as written to {@code report.json}.
     *
     * @param ratio ours over theirs, null where that is no ratio
     * @param low the 95% interval's lower end, null if none
     * @param high its upper end, null if none
     * @param units the paired units (rounds or steady sub-windows) the call rests on
     * @param outcome for ours against theirs: won, lost, within noise, equal, or no interval
     */
    record VerdictRow(
            int connections,
            String ours,
            String theirs,
            String measure,
            String unit,
            String better,
            double oursValue,
            double theirsValue,
            Double ratio,
            Double low,
            Double high,
            int units,
            String outcome) {}

    /** The report as written to {@code report.json}. */
    record SessionReport(
            String generatedAt,
            String tier,
            String connectionKind,
            Map<String, Object> scenario,
            String command,
            boolean clean,
            List<VerdictRow> verdict,
            List<VerdictTable.WheelRun> wheelRuns,
            List<RunResult> runs,
            List<IdleMachinery> idleMachinery) {}

    /** Whether every connection opened and no idle event was missed or false, in every run. */
    boolean clean() {
        return runs.stream().allMatch(Report::clean);
    }

    /** The command's exit status: wheelbeat's arms are judged, a peer's misses are a verdict row. */
    ExitStatus exitStatus() {
        return ExitStatus.of(
                runs, r -> settings.baseArms().stream().anyMatch(a -> a.id().equals(r.handler()) && a.ours()));
    }

    static boolean clean(RunResult r) {
        return r.failed() == 0
                && r.idle().neverHeard() == 0
                && (!r.idle().applicable()
                        || (r.idle().missed() == 0 && r.idle().falseIdle() == 0));
    }

    void write() throws IOException {
        Path dir = settings.reportDir();
        Files.createDirectories(dir);
        SessionReport report = new SessionReport(
                Instant.now().truncatedTo(ChronoUnit.SECONDS).toString(),
                settings.tier().id(),
                settings.tier().description(),
                scenario(),
                command(),
                clean(),
                verdictRows(),
                verdicts.stream().flatMap(v -> v.wheelRuns().stream()).toList(),
                runs,
                idleMachinery);
        json().writeValue(dir.resolve(JSON_FILE).toFile(), report);
        List<String> charts = new Charts(runs).write(dir);
        Files.writeString(dir.resolve(MARKDOWN_FILE), markdown(report, charts), StandardCharsets.UTF_8);
    }

    private static List<IdleMachinery> idleMachinery(List<RunResult> runs) {
        List<IdleMachinery> result = new ArrayList<>();
        for (RunResult run : runs) {
            if (!run.idle().applicable()) {
                continue;
            }
            VerdictTable.find(runs, run.connectionsRequested(), run.round(), VerdictTable.BASELINE)
                    .ifPresent(base -> result.add(new IdleMachinery(
                            run.handler(),
                            run.connectionsRequested(),
                            run.round(),
                            run.heap().liveBytesPerConnection() - base.heap().liveBytesPerConnection(),
                            run.steady().loopNanosPerMessage() - base.steady().loopNanosPerMessage())));
        }
        return result;
    }

    private List<VerdictRow> verdictRows() {
        List<VerdictRow> rows = new ArrayList<>();
        for (VerdictTable table : verdicts) {
            for (VerdictTable.Row row : table.rows()) {
                VerdictTable.Measure m = row.measure();
                Verdict.Call c = row.call();
                rows.add(new VerdictRow(
                        table.connections(),
                        table.ours(),
                        table.theirs(),
                        m.name(),
                        m.unit(),
                        m.better().name().toLowerCase(Locale.ROOT),
                        c.ours(),
                        c.theirs(),
                        Double.isNaN(c.ratio()) ? null : c.ratio(),
                        c.hasInterval() ? c.low() : null,
                        c.hasInterval() ? c.high() : null,
                        c.units(),
                        c.outcome().plain().toLowerCase(Locale.ROOT)));
            }
        }
        return rows;
    }

    /** The verdict tables as plain text, for the console's last lines. */
    String verdictsText() {
        if (verdicts.isEmpty()) {
            return "No verdict: it needs both " + settings.ours() + " and " + settings.theirs()
                    + " in the session (--idle-handler wheel,netty, or --event-loop netty,wheel).\n";
        }
        return String.join("\n", verdicts.stream().map(VerdictTable::plain).toList());
    }

    /** The scenario for report.json: machine-readable keys and plain values. */
    private Map<String, Object> scenario() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tier", settings.tier().id());
        m.put("protocol", settings.protocol().id());
        m.put("connections", settings.sizes());
        m.put("handlers", settings.handlers().stream().map(IdleHandlerKind::id).toList());
        m.put("openRatePerSecond", settings.openRate());
        m.put("maxPendingConnects", settings.maxPendingConnects());
        m.put("heartbeatMs", settings.heartbeatNanos() / 1e6);
        m.put("jitter", settings.jitter());
        m.put("burst", settings.burst());
        m.put("silentFraction", settings.silentFraction());
        m.put("silenceSpreadMs", settings.silenceSpreadNanos() / 1e6);
        m.put("readerIdleMs", settings.readerIdleNanos() / 1e6);
        m.put("toleranceMs", settings.toleranceNanos() / 1e6);
        m.put("steadyWindows", settings.steadyWindows());
        m.put("windowMs", settings.windowNanos() / 1e6);
        m.put(
                "eventLoops",
                settings.eventLoops().stream().map(EventLoopKind::id).toList());
        m.put("arms", settings.baseArms().stream().map(Arm::id).toList());
        m.put("serverThreads", settings.serverThreads());
        m.put("clientThreads", settings.clientThreads());
        m.put("seed", settings.seed());
        m.put("rounds", settings.rounds());
        return m;
    }

    /** The scenario for report.md: what each setting is, in words and units. */
    private List<String[]> scenarioRows(RunResult.Machine machine) {
        Settings s = settings;
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"connections", s.tier().description()});
        rows.add(new String[] {
            "protocol",
            s.protocol() == Protocol.WEBSOCKET
                    ? "WebSocket (wheel: WebSocketKeepAliveHandler; netty: IdleStateHandler + pings)"
                    : "the load test's own bytes: a 4-byte hello, then one byte per heartbeat"
        });
        rows.add(new String[] {
            "connections per run",
            String.join(", ", s.sizes().stream().map(n -> f("%,d", n)).toList())
        });
        rows.add(new String[] {
            "arms, side by side in one JVM",
            String.join(
                            ", ",
                            s.baseArms().stream()
                                    .map(a -> a.id() + " (" + a.handler().id() + " handler on "
                                            + a.loop().id() + " loops)")
                                    .toList())
                    + "; each takes an equal consecutive share of the connections"
        });
        rows.add(new String[] {"rounds", s.rounds() + ", one JVM each, the arms' order rotated by one each round"});
        rows.add(new String[] {
            "steady window",
            s.steadyWindows() + " sub-windows of "
                    + DurationConverter.human(s.windowNanos()) + " after the ramp and one longest heartbeat gap, "
                    + "before the silence"
        });
        rows.add(new String[] {
            "open rate",
            f("at most %,.0f connections/s, at most %,d connects in flight", s.openRate(), s.maxPendingConnects())
        });
        rows.add(new String[] {
            "heartbeat",
            "every " + DurationConverter.human(s.heartbeatNanos())
                    + (s.burst()
                            ? ", every connection at the same moments"
                            : f(" +/- %.0f%%, uniform", s.jitter() * 100))
        });
        rows.add(new String[] {"reader idle", DurationConverter.human(s.readerIdleNanos())});
        rows.add(new String[] {
            "silent",
            f("%.0f%% of connections, chosen by seed, stopping at known times spread over ", s.silentFraction() * 100)
                    + DurationConverter.human(s.silenceSpreadNanos())
        });
        rows.add(new String[] {
            "tolerance",
            DurationConverter.human(s.toleranceNanos())
                    + " (an idle event later than the true deadline + this counts as missed)"
        });
        rows.add(new String[] {"heap readings (full GCs)", "one before the ramp, one after each arm's share"});
        rows.add(new String[] {"event loops", s.serverThreads() + " per arm's server, " + s.clientThreads() + " client"
        });
        rows.add(new String[] {"seed", Long.toString(s.seed())});
        rows.add(new String[] {
            "machine",
            machine.cores() + " cores, " + machine.jvm() + ", max heap " + f("%,d", machine.maxHeapBytes() >> 20)
                    + " MiB per run"
        });
        return rows;
    }

    /**
     * A command line that repeats this session: this JVM's options (which every run's JVM got
     * too), then the session's options with the presets spelled out.
     */
    private String command() {
        List<String> args = new ArrayList<>(List.of("java"));
        args.addAll(ChildJvm.effectiveOptions(List.of()));
        args.addAll(List.of("-jar", "performance/loadtest/target/loadtest.jar"));
        args.addAll(settings.sessionArgs());
        return String.join(" ", args);
    }

    // ------------------------------------------------------------------ Markdown

    private String markdown(SessionReport report, List<String> charts) {
        StringBuilder md = new StringBuilder();
        md.append("# wheelbeat load test: ")
                .append(settings.tier().id())
                .append(" tier")
                .append(
                        settings.protocol() == Protocol.WEBSOCKET
                                ? ", WebSocket (wheel: WebSocketKeepAliveHandler; netty: IdleStateHandler + pings)"
                                : "")
                .append("\n\n");
        for (VerdictTable verdict : verdicts) {
            md.append(verdict.markdown()).append('\n');
        }
        md.append("Connections here are **")
                .append(settings.tier().description())
                .append("**.\n\n");
        md.append("Generated ")
                .append(report.generatedAt())
                .append(". ")
                .append(
                        report.clean()
                                ? "Every run opened every connection and had no missed and no false idle events."
                                : "**Not every run came out clean**: see the failed, missed and false rows.")
                .append("\n\n");
        md.append("Repeat with:\n\n    ").append(report.command()).append("\n\n");
        md.append("## Scenario\n\n| setting | value |\n|---|---|\n");
        scenarioRows(runs.get(0).machine())
                .forEach(row -> md.append("| ")
                        .append(row[0])
                        .append(" | ")
                        .append(row[1])
                        .append(" |\n"));
        md.append('\n');
        for (int size : settings.sizes()) {
            List<RunResult> group =
                    runs.stream().filter(r -> r.connectionsRequested() == size).toList();
            md.append("## ").append(String.format(Locale.ROOT, "%,d", size)).append(" connections, run by run\n\n");
            table(md, group);
            byClass(md, size);
        }
        if (settings.sizes().size() > 1) {
            scaling(md);
        }
        md.append("## Charts\n\n");
        for (String chart : charts) {
            md.append("![").append(chart).append("](").append(chart).append(")\n\n");
        }
        md.append("## What the numbers count\n\n");
        md.append("- **Heap per connection**: an arm's share of the growth of the live objects' bytes (class "
                        + "histograms, each after a full GC, before and after its share of the ramp) over the "
                        + "connections opened in it; the heap in use the collector reports at the same readings "
                        + "is in the run-by-run table, it also moves with the collector's region bookkeeping. ")
                .append(
                        settings.tier() == Tier.LOCAL
                                ? "Local tier: both ends of each connection are in this JVM. "
                                : "TCP tier: the server process's heap only. ")
                .append("The bookkeeping of the load test itself (its ledgers and heartbeat calendars) is allocated "
                        + "before the first reading and not counted.\n");
        md.append("- **Idle machinery**: an arm minus the arm without an idle handler, same round, same JVM.\n");
        md.append("- **Lateness**: fire time of the first reader-idle event minus the true deadline, which is "
                + "the connection's last message arrival at the server (stamped by a probe in front of the idle "
                + "handler, on the same clock) plus the reader-idle limit.\n");
        md.append("- **Missed**: a silenced connection not reported by deadline + tolerance. **False**: an idle "
                + "event before the true deadline, or on a connection the plan kept talking.\n");
        md.append("- **Timers**, wheel: ").append(TimerAccounting.WHEEL_NOTE).append(".\n");
        md.append("- **Timers**, Netty: ").append(TimerAccounting.NETTY_NOTE).append(".\n");
        md.append("- **Largest run of the wheel's task**: the most timers one run of the task that drives a loop's "
                        + "wheel fired and moved between the wheel's levels, over the round (the wheel handler's"
                        + " wheel, or "
                        + "the loop group's own); the engine bounds it at ")
                .append(f("%,d", TimerAccounting.WHEEL_RUN_BOUND))
                .append(".\n");
        md.append("- **GC**: the JVM's collections in the round, shared by the arms, not counting the load "
                + "test's own heap-reading full GCs (listed apart).\n");
        md.append("- **CPU**: thread CPU time of each arm's server event loops; steady: in the sub-windows "
                + "between ramp and silence; JFR: the share of the loops' execution samples in idle-machinery "
                + "frames times the steady CPU per message.\n");
        md.append("- **Verdict**: ours over theirs on paired units (steady sub-windows or rounds), with a 95% "
                + "bootstrap interval; won or lost only where the interval excludes 1.0, otherwise \"within "
                + "noise\". Lower is better for every cost, higher for the open rate.\n");
        return md.toString();
    }

    private void table(StringBuilder md, List<RunResult> group) {
        md.append("| |");
        group.forEach(r -> md.append(' ')
                .append(r.handler())
                .append(settings.rounds() > 1 ? " (" + r.round() + ")" : "")
                .append(" |"));
        md.append("\n|---|");
        group.forEach(r -> md.append("---:|"));
        md.append('\n');
        row(
                md,
                group,
                "arm's connections opened / failed (of the round's)",
                r -> f("%,d / %,d (%,d)", r.opened(), r.failed(), r.connectionsRequested()));
        row(md, group, "open rate (connections/s)", r -> f("%,.0f", r.openRatePerSecond()));
        row(
                md,
                group,
                "heap in use per connection (bytes, after full GC)",
                r -> f("%,.0f", r.heap().bytesPerConnection()));
        row(
                md,
                group,
                "live objects per connection (bytes, class histogram)",
                r -> f("%,.0f", r.heap().liveBytesPerConnection()));
        row(
                md,
                group,
                "idle machinery per connection (bytes, minus none)",
                r -> machinery(r).map(m -> f("%,.0f", m.bytesPerConnection())).orElse("-"));
        row(md, group, "timer schedules / s", r -> f("%,.0f", r.timers().schedulesPerSecond()));
        row(md, group, "timer cancels / s", r -> f("%,.0f", r.timers().cancelsPerSecond()));
        row(
                md,
                group,
                "timer re-arms / s (read batches)",
                r -> f("%,.0f", r.timers().reArmsPerSecond()));
        row(md, group, "timer expirations / s", r -> f("%,.0f", r.timers().expirationsPerSecond()));
        row(
                md,
                group,
                "server-loop scheduled tasks / s",
                r -> f("%,.0f", r.timers().loopScheduledTasksPerSecond()));
        row(
                md,
                group,
                "largest run of the wheel's task: timers fired + moved (by loop)",
                r -> r.timers().largestWheelRun() < 0
                        ? "-"
                        : f(
                                "%,d (%s)",
                                r.timers().largestWheelRun(),
                                String.join(
                                        ", ",
                                        r.timers().largestWheelRunByLoop().stream()
                                                .map(v -> f("%,d", v))
                                                .toList())));
        row(md, group, "messages at the server / s", r -> f("%,.0f", r.traffic().messagesPerSecond()));
        row(
                md,
                group,
                "silenced / detected on time",
                r -> idle(r, i -> f("%,d / %,d", i.plannedSilent(), i.detectedOnTime())));
        row(md, group, "**missed idle events**", r -> idle(r, i -> f("%,d", i.missed())));
        row(md, group, "**false idle events**", r -> idle(r, i -> f("%,d", i.falseIdle())));
        row(
                md,
                group,
                "lateness p50 / p99 / p99.9 / max (ms)",
                r -> idle(
                        r,
                        i -> f(
                                "%.3f / %.3f / %.3f / %.3f",
                                i.lateness().p50Ms(),
                                i.lateness().p99Ms(),
                                i.lateness().p999Ms(),
                                i.lateness().maxMs())));
        row(
                md,
                group,
                "lateness, worst second of the round (at s: reported, p50 / max ms)",
                r -> idle(
                        r,
                        i -> i.overTime().stream()
                                .max(java.util.Comparator.comparingDouble(RunResult.LateSecond::maxMs))
                                .map(l -> f("%d s: %,d, %.1f / %.1f", l.atSecond(), l.reported(), l.p50Ms(), l.maxMs()))
                                .orElse("-")));
        row(
                md,
                group,
                "GC collections / total pause / longest (ms)",
                r -> f("%,d / %,.0f / %,.0f", r.gc().collections(), r.gc().totalPauseMs(), r.gc().maxPauseMs()));
        row(
                md,
                group,
                "allocated: whole run (MiB) / server loops per message (B)",
                r -> f("%,d / %,.1f", r.gc().allocatedBytes() >> 20, r.gc().serverLoopBytesPerMessage()));
        row(
                md,
                group,
                "heap-reading full GCs (count / ms)",
                r -> f("%,d / %,.0f", r.gc().heapReadingCollections(), r.gc().heapReadingPauseMs()));
        row(
                md,
                group,
                "CPU: process / server loops / clients (s)",
                r -> f(
                        "%.1f / %.1f / %.1f",
                        r.cpu().processSeconds(),
                        r.cpu().serverLoopSeconds(),
                        r.cpu().clientSeconds()));
        row(
                md,
                group,
                "server-loop CPU per message, whole round (ns)",
                r -> f("%,.0f", r.cpu().serverLoopNanosPerMessage()));
        row(
                md,
                group,
                "steady: server-loop CPU per message (ns) / per connection-second (ns)",
                r -> f(
                        "%,.0f / %,.0f",
                        r.steady().loopNanosPerMessage(), r.steady().loopNanosPerConnectionSecond()));
        row(
                md,
                group,
                "steady: idle machinery CPU per message (ns, minus none)",
                r -> machinery(r)
                        .map(m -> f("%,.0f", m.serverLoopNanosPerMessage()))
                        .orElse("-"));
        row(
                md,
                group,
                "steady: JFR samples on the loops / in idle machinery",
                r -> f(
                        "%,d / %,d (%.1f%%)",
                        r.steady().attribution().samples(),
                        r.steady().attribution().idleSamples(),
                        r.steady().attribution().idleShare() * 100));
        row(
                md,
                group,
                "steady: idle machinery CPU per message, JFR (ns)",
                r -> f(
                        "%,.0f +/- %,.0f",
                        r.steady().attribution().idleNanosPerMessage(),
                        r.steady().attribution().idleNanosPerMessageError()));
        row(
                md,
                group,
                "steady: idle frames sampled most",
                r -> String.join("<br>", r.steady().attribution().topIdleFrames()));
        row(
                md,
                group,
                "loop lag: steady worst / round worst (ms, at s)",
                r -> f(
                        "%,.1f / %,.1f (%.0f)",
                        r.loopLag().steadyMaxMs(),
                        r.loopLag().maxMs(),
                        r.loopLag().maxAtSeconds()));
        row(
                md,
                group,
                "worst heartbeat sender lag (ms)",
                r -> f("%,.0f", r.traffic().maxSenderLagMs()));
        row(md, group, "round (s)", r -> f("%.1f", r.windowSeconds()));
        row(
                md,
                group,
                "machine load (1-minute load average, start / end)",
                r -> f(
                        "%.2f / %.2f",
                        r.machine().loadAverageAtStart(), r.machine().loadAverageAtEnd()));
        md.append('\n');
    }

    /** The idle machinery's live bytes by class, if the session ran the baseline. */
    private void byClass(StringBuilder md, int size) {
        Map<String, Map<String, Double>> byClass = machineryByClass(runs, size, 1);
        List<String> arms = byClass.values().stream()
                .flatMap(m -> m.keySet().stream())
                .distinct()
                .sorted()
                .toList();
        if (arms.isEmpty()) {
            return;
        }
        md.append("Idle machinery by class: live bytes per connection, arm minus none, mean over rounds; "
                + "classes that moved by at least 1 B\n\n| class |");
        arms.forEach(a -> md.append(' ').append(a).append(" |"));
        md.append("\n|---|");
        arms.forEach(a -> md.append("---:|"));
        md.append('\n');
        byClass.forEach((c, v) -> {
            md.append("| `").append(c).append("` |");
            arms.forEach(a ->
                    md.append(' ').append(f("%,.1f", v.getOrDefault(a, 0.0))).append(" |"));
            md.append('\n');
        });
        md.append('\n');
    }

    /**
     * Each arm's live bytes per connection by class minus the baseline's of the same round, the
     * mean over the rounds that have both; classes whose mean moved by at least {@code shown}
     * bytes in some arm, largest first.
     *
     * @return class to (arm to bytes per connection)
     */
    static Map<String, Map<String, Double>> machineryByClass(List<RunResult> runs, int connections, double shown) {
        Map<String, Map<String, Double>> sums = new LinkedHashMap<>();
        Map<String, Integer> rounds = new LinkedHashMap<>();
        for (RunResult run : runs) {
            if (run.connectionsRequested() != connections || !run.idle().applicable()) {
                continue;
            }
            Optional<RunResult> base = VerdictTable.find(runs, connections, run.round(), VerdictTable.BASELINE);
            if (base.isEmpty()) {
                continue;
            }
            rounds.merge(run.handler(), 1, Integer::sum);
            Map<String, Double> mine = run.heap().liveByClass();
            Map<String, Double> theirs = base.get().heap().liveByClass();
            Set<String> classes = new TreeSet<>(mine.keySet());
            classes.addAll(theirs.keySet());
            for (String c : classes) {
                sums.computeIfAbsent(c, k -> new LinkedHashMap<>())
                        .merge(run.handler(), mine.getOrDefault(c, 0.0) - theirs.getOrDefault(c, 0.0), Double::sum);
            }
        }
        Map<String, Map<String, Double>> means = new LinkedHashMap<>();
        sums.entrySet().stream()
                .map(e -> {
                    Map<String, Double> mean = new LinkedHashMap<>();
                    e.getValue().forEach((arm, sum) -> mean.put(arm, sum / rounds.get(arm)));
                    return Map.entry(e.getKey(), mean);
                })
                .filter(e -> e.getValue().values().stream().anyMatch(v -> Math.abs(v) >= shown))
                .sorted((a, b) -> Double.compare(largest(b.getValue()), largest(a.getValue())))
                .forEach(e -> means.put(e.getKey(), e.getValue()));
        return means;
    }

    private static double largest(Map<String, Double> values) {
        return values.values().stream().mapToDouble(Math::abs).max().orElse(0);
    }

    private void scaling(StringBuilder md) {
        md.append("## Scaling\n\n| connections | handler | heap/conn (B) | idle machinery (B/conn) | "
                + "server CPU/msg (ns) | idle machinery CPU/msg (ns) | timer ops/s (sched+cancel+re-arm) |\n"
                + "|---:|---|---:|---:|---:|---:|---:|\n");
        for (RunResult r : runs) {
            Optional<IdleMachinery> m = machinery(r);
            md.append(f(
                    "| %,d | %s | %,.0f | %s | %,.0f | %s | %,.0f |\n",
                    r.connectionsRequested(),
                    r.handler(),
                    r.heap().liveBytesPerConnection(),
                    m.map(x -> f("%,.0f", x.bytesPerConnection())).orElse("-"),
                    r.steady().loopNanosPerMessage(),
                    m.map(x -> f("%,.0f", x.serverLoopNanosPerMessage())).orElse("-"),
                    r.timers().schedulesPerSecond()
                            + r.timers().cancelsPerSecond()
                            + r.timers().reArmsPerSecond()));
        }
        md.append('\n');
    }

    private Optional<IdleMachinery> machinery(RunResult r) {
        return idleMachinery.stream()
                .filter(m -> m.handler().equals(r.handler())
                        && m.connections() == r.connectionsRequested()
                        && m.round() == r.round())
                .findFirst();
    }

    private static String idle(RunResult r, Function<RunResult.Idle, String> value) {
        return r.idle().applicable() ? value.apply(r.idle()) : "n/a";
    }

    private static void row(StringBuilder md, List<RunResult> group, String name, Function<RunResult, String> cell) {
        md.append("| ").append(name).append(" |");
        group.forEach(r -> md.append(' ').append(cell.apply(r)).append(" |"));
        md.append('\n');
    }

    private static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
