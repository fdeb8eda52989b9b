package io.wheelbeat.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Renders one suite run as Markdown: the targets with their verdicts, then one table per workload
 * with every contender's cost and the ratio ours / peer, and the memory per pending timer.
 *
 * <p>Ratios are computed on CPU per operation (the benchmark thread's plus the timer's own
 * threads'), which charges a threaded timer for the work it moves off the caller and is not
 * inflated when a busy machine deschedules the benchmark; the wall-time score is shown beside it.
 */
final class SuiteReport {

    static final String REARM = "RearmBenchmark.rearm";
    static final String BREAKDOWN = "RearmBreakdownBenchmark.";
    static final String SCHEDULE_CANCEL = "ScheduleCancelBenchmark.scheduleThenCancel";
    static final String EXPIRE = "ExpiryBenchmark.expire";
    static final String IDLE_ADVANCE = "IdleAdvanceBenchmark.idleAdvance";
    static final String BURST = "BurstBenchmark.burst";
    static final String PUNCTUAL = "PunctualBurstBenchmark.burst";
    static final String HANDLER = "HandlerReadBatchBenchmark.readBatch";

    private static final String OURS = Contender.OURS.id;
    private static final String OURS_THREADSAFE = Contender.OURS_WHEELTIMER.id;
    /** JMH's gc.alloc.rate.norm of an allocation-free loop is a small fraction of a byte. */
    private static final double ZERO_ALLOCATION = 0.5;

    /** What the report says about the run itself. */
    record RunInfo(
            String title,
            String command,
            String when,
            String machine,
            String jdk,
            String gc,
            String forkJvmArgs,
            String iterations,
            String load) {}

    private SuiteReport() {}

    static String render(List<ResultRow> rows, List<MemoryFootprint.Measurement> memory, RunInfo info) {
        StringBuilder md = new StringBuilder();
        md.append("# ").append(info.title()).append("\n\n");
        md.append("- When: ").append(info.when()).append("\n");
        md.append("- Command: `").append(info.command()).append("`\n");
        md.append("- Machine: ").append(info.machine()).append("\n");
        md.append("- JDK: ")
                .append(info.jdk())
                .append("; GC: ")
                .append(info.gc())
                .append("; fork JVM options: `")
                .append(info.forkJvmArgs())
                .append("`\n");
        md.append("- JMH: ").append(info.iterations()).append("\n");
        md.append("- Load average (1 min) at start / end: ").append(info.load()).append("\n\n");
        md.append("How to read: `CPU ns/op` is the benchmark thread's CPU plus, for timers with threads of "
                + "their own, those threads' CPU (shown as caller + timer threads); `JVM CPU ns/op` is the whole"
                + " process's, which adds the garbage "
                + "collector's threads (the cost of allocation) and some noise (JIT, JMH). `ours ÷ this` is ours "
                + "(TimerWheel on the owner thread) divided by the row's contender, on CPU per operation: "
                + "below 1 ours is cheaper (0.20 = 5x cheaper). `wall ns/op` is JMH's score.\n\n");

        targets(md, rows, memory);
        workload(
                md,
                "1. Re-arm (cancel + schedule, ours: rescheduleAt); order: random = drawn per operation, "
                        + "fixed-permutation = one permutation replayed every pass (flatters per-re-arm handles)",
                REARM,
                rows);
        breakdown(md, rows);
        workload(md, "2. Schedule then cancel a fresh timer", SCHEDULE_CANCEL, rows);
        workload(
                md,
                "3. Expiry throughput: 524,288 timers spread over spreadTicks, per timer (schedule + fire)",
                EXPIRE,
                rows);
        workload(md, "3b. Idle advance across a gap, 65,536 far timers pending, per advance", IDLE_ADVANCE, rows);
        workload(md, "4. Burst: 32,768 timers due in the same tick, per timer (schedule + fire)", BURST, rows);
        punctual(md, rows);
        handler(md, rows);
        memory(md, memory);
        return md.toString();
    }

    // ------------------------------------------------------------------ targets

    /** The targets of issue 11 (TimerWheel v2) and the idle handler's. */
    private static void targets(StringBuilder md, List<ResultRow> rows, List<MemoryFootprint.Measurement> memory) {
        md.append("## Targets\n\n| target | measured | verdict |\n|---|---|---|\n");
        for (ResultRow o : rows(rows, EXPIRE, OURS)) {
            String when = "524,288 timers over " + o.param("spreadTicks") + " ticks";
            md.append(line(
                    "expiry ≤ 50 ns per timer, schedule + fire (" + when + ")",
                    "CPU " + ns(o.cpu()) + ", wall " + ns(o.score()),
                    verdict(o.cpu() <= 50)));
            rows(rows, EXPIRE, Contender.AGRONA.id).stream()
                    .filter(a -> a.param("spreadTicks").equals(o.param("spreadTicks")))
                    .findFirst()
                    .ifPresent(a -> md.append(line(
                            "expiry no slower than Agrona (" + when + ")",
                            "ours ÷ agrona: CPU " + ratio(o.cpu() / a.cpu()) + " (" + ns(o.cpu()) + " / " + ns(a.cpu())
                                    + ")",
                            verdict(o.cpu() <= a.cpu()))));
        }
        for (ResultRow o : rows(rows, IDLE_ADVANCE, OURS)) {
            md.append(line(
                    "idle advance of " + o.param("gapMs") + " ms with 65,536 far timers ≤ 1 µs",
                    "CPU " + ns(o.cpu()) + " ns",
                    verdict(o.cpu() <= 1000)));
        }
        for (ResultRow o : rows(rows, REARM, OURS)) {
            if (!o.param("order").equals("random")
                    || o.param("pending").equals("1024")
                    || o.param("pending").equals("65536")) {
                continue;
            }
            String when = o.param("pending") + " pending, T = " + o.param("delayMs") + " ms, random order";
            ratioTarget(md, rows, o, Contender.NETTY_HWT.id, "≤ 0.5x HashedWheelTimer's CPU", 0.5, when);
            ratioTarget(md, rows, o, Contender.KAFKA.id, "≤ 0.5x Kafka's CPU", 0.5, when);
            ratioTarget(
                    md, rows, o, Contender.NETTY_EVENTLOOP.id, "≥ 5x cheaper than the event loop's heap", 0.2, when);
            md.append(line(
                    "re-arm allocates 0 B (" + when + ")",
                    bytes(o.allocBytes()) + " B/op",
                    verdict(o.allocBytes() < ZERO_ALLOCATION)));
        }
        for (MemoryFootprint.Measurement m : memory) {
            if (m.contender().equals(OURS)) {
                md.append(line(
                        "≤ 24 B per pending timer (" + m.timers() + " pending, default settings)",
                        bytes(m.heapBytesPerTimer()) + " B heap, " + bytes(m.jolBytesPerTimer()) + " B JOL",
                        verdict(m.heapBytesPerTimer() <= 24, m.jolBytesPerTimer() <= 24)));
            }
        }
        for (ResultRow wheel : handlerRows(rows, "wheel")) {
            String channels = wheel.param("channels");
            Optional<ResultRow> netty = sameChannels(rows, "netty", channels);
            double bound = channels.equals("1") ? 0.8 : 0.5;
            String when = channels.equals("1") ? "one channel, in cache" : channels + " channels, random order";
            if (channels.equals("1") || channels.equals("524288")) {
                md.append(line(
                        "handler per read batch ≤ " + bound + "x IdleStateHandler's CPU (" + when + ")",
                        netty.map(n -> "wheel ÷ netty: CPU " + ratio(wheel.cpu() / n.cpu()) + " (" + ns(wheel.cpu())
                                        + " / " + ns(n.cpu()) + ")")
                                .orElse("netty not measured"),
                        netty.map(n -> verdict(wheel.cpu() <= bound * n.cpu())).orElse("NOT RUN")));
                Optional<ResultRow> none = sameChannels(rows, "none", channels);
                if (netty.isPresent() && none.isPresent()) {
                    double ours = wheel.cpu() - none.get().cpu();
                    double theirs = netty.get().cpu() - none.get().cpu();
                    md.append(line(
                            "the same, idle machinery only (minus the pipeline without a handler)",
                            "wheel ÷ netty: CPU " + ratio(ours / theirs) + " (" + ns(ours) + " / " + ns(theirs) + ")",
                            verdict(ours <= bound * theirs)));
                }
            }
            md.append(line(
                    "handler allocates 0 B per read batch (" + when + ")",
                    bytes(wheel.allocBytes()) + " B/op",
                    verdict(wheel.allocBytes() < ZERO_ALLOCATION)));
        }
        if (handlerRows(rows, "wheel").isEmpty() && !handlerRows(rows, "netty").isEmpty()) {
            md.append(line(
                    "handler per read batch ≤ 0.8x IdleStateHandler's CPU, 0 B",
                    "not measured: WheelIdleStateHandler was not in this build",
                    "NOT RUN"));
        }
        md.append("\n");
    }

    private static List<ResultRow> rows(List<ResultRow> rows, String benchmark, String contender) {
        return rows.stream()
                .filter(r ->
                        r.benchmark().equals(benchmark) && r.param("contender").equals(contender))
                .toList();
    }

    private static void ratioTarget(
            StringBuilder md,
            List<ResultRow> rows,
            ResultRow ours,
            String peer,
            String what,
            double limit,
            String when) {
        find(rows, REARM, peer, ours.param("pending"), ours.param("delayMs"), ours.param("order"))
                .ifPresent(p -> {
                    double cpu = ours.cpu() / p.cpu();
                    md.append(line(
                            "re-arm " + what + " (" + when + ")",
                            "ours ÷ " + peer + ": CPU " + ratio(cpu) + " (" + ns(ours.cpu()) + " / " + cpu(p) + ")",
                            verdict(cpu <= limit)));
                });
    }

    private static String verdict(boolean met) {
        return met ? "met" : "**MISSED**";
    }

    private static String verdict(boolean wallMet, boolean cpuMet) {
        if (wallMet && cpuMet) {
            return "met";
        }
        if (cpuMet) {
            return "**MISSED** on wall time, met on CPU time";
        }
        if (wallMet) {
            return "**MISSED** on CPU time, met on wall time";
        }
        return "**MISSED**";
    }

    // ------------------------------------------------------------------ workloads

    private static void workload(StringBuilder md, String title, String benchmark, List<ResultRow> rows) {
        List<ResultRow> mine =
                rows.stream().filter(r -> r.benchmark().equals(benchmark)).toList();
        if (mine.isEmpty()) {
            return;
        }
        md.append("## ").append(title).append("\n\n");
        boolean counted = mine.stream().anyMatch(r -> !Double.isNaN(r.firedTimers()));
        md.append("| parameters | contender | wall ns/op | CPU ns/op | JVM CPU ns/op | B/op | ours ÷ this "
                        + "| ours-wheeltimer ÷ this |")
                .append(counted ? " fired / iteration |\n" : "\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|").append(counted ? "---:|\n" : "\n");
        for (Map.Entry<String, List<ResultRow>> group :
                groups(mine, "contender").entrySet()) {
            List<ResultRow> members = new ArrayList<>(group.getValue());
            members.sort(Comparator.comparingInt(
                    r -> Contender.of(r.param("contender")).ordinal()));
            Optional<ResultRow> ours = members.stream()
                    .filter(r -> r.param("contender").equals(OURS))
                    .findFirst();
            Optional<ResultRow> threadsafe = members.stream()
                    .filter(r -> r.param("contender").equals(OURS_THREADSAFE))
                    .findFirst();
            boolean first = true;
            for (ResultRow r : members) {
                md.append("| ")
                        .append(first ? group.getKey() : "")
                        .append(" | ")
                        .append(r.param("contender"))
                        .append(" | ")
                        .append(ns(r.score()))
                        .append(" | ")
                        .append(cpu(r))
                        .append(" | ")
                        .append(ns(r.processCpu()))
                        .append(" | ")
                        .append(bytes(r.allocBytes()))
                        .append(" | ")
                        .append(ours.map(o -> ratio(o.cpu() / r.cpu())).orElse("–"))
                        .append(" | ")
                        .append(threadsafe.map(o -> ratio(o.cpu() / r.cpu())).orElse("–"))
                        .append(counted ? " | " + count(r.firedTimers()) : "")
                        .append(" |\n");
                first = false;
            }
        }
        md.append("\n");
    }

    private static void breakdown(StringBuilder md, List<ResultRow> rows) {
        List<ResultRow> mine =
                rows.stream().filter(r -> r.benchmark().startsWith(BREAKDOWN)).toList();
        if (mine.isEmpty()) {
            return;
        }
        md.append("### 1b. What our re-arm's cost is made of (ours only, T = 2 s)\n\n");
        md.append("| pending | part | wall ns/op | CPU ns/op | B/op |\n|---|---|---:|---:|---:|\n");
        for (Map.Entry<String, List<ResultRow>> group : groups(mine, "delayMs").entrySet()) {
            for (ResultRow r : group.getValue()) {
                md.append("| ")
                        .append(r.param("pending"))
                        .append(" | ")
                        .append(r.benchmark().substring(BREAKDOWN.length()))
                        .append(" | ")
                        .append(ns(r.score()))
                        .append(" | ")
                        .append(cpu(r))
                        .append(" | ")
                        .append(bytes(r.allocBytes()))
                        .append(" |\n");
            }
        }
        md.append("\n");
    }

    private static void punctual(StringBuilder md, List<ResultRow> rows) {
        List<ResultRow> mine =
                rows.stream().filter(r -> r.benchmark().startsWith(PUNCTUAL)).toList();
        if (mine.isEmpty()) {
            return;
        }
        md.append("## 4b. Burst polled at each deadline: timers with distinct deadlines in one tick, the driver waking "
                + "for each next deadline, per timer (schedule + its poll)\n\n");
        md.append("| timers | contender | wall ns/op | CPU ns/op | B/op | ours ÷ this"
                + " |\n|---|---|---:|---:|---:|---:|\n");
        for (String size : List.of("1k", "32k")) {
            List<ResultRow> group =
                    mine.stream().filter(r -> r.benchmark().endsWith(size)).toList();
            Optional<ResultRow> ours = group.stream()
                    .filter(r -> r.param("contender").equals(OURS))
                    .findFirst();
            for (ResultRow r : group) {
                md.append("| ")
                        .append(size)
                        .append(" | ")
                        .append(r.param("contender"))
                        .append(" | ")
                        .append(ns(r.score()))
                        .append(" | ")
                        .append(cpu(r))
                        .append(" | ")
                        .append(bytes(r.allocBytes()))
                        .append(" | ")
                        .append(ours.map(o -> ratio(o.cpu() / r.cpu())).orElse("–"))
                        .append(" |\n");
            }
        }
        md.append("\n");
    }

    private static Optional<ResultRow> sameChannels(List<ResultRow> rows, String handler, String channels) {
        return handlerRows(rows, handler).stream()
                .filter(r -> r.param("channels").equals(channels))
                .findFirst();
    }

    private static List<ResultRow> handlerRows(List<ResultRow> rows, String handler) {
        return rows.stream()
                .filter(r -> r.benchmark().equals(HANDLER) && r.param("handler").equals(handler))
                .toList();
    }

    private static void handler(StringBuilder md, List<ResultRow> rows) {
        List<ResultRow> mine =
                rows.stream().filter(r -> r.benchmark().equals(HANDLER)).toList();
        if (mine.isEmpty()) {
            return;
        }
        md.append("## 5. Idle handler per read batch (channelRead + channelReadComplete, EmbeddedChannel; "
                + "N channels on one shared loop, one drawn at random per batch)\n\n");
        md.append(
                "| handler | channels | wall ns/op | CPU ns/op | B/op | this ÷ netty | CPU minus none | that ÷ netty's"
                        + " |\n"
                        + "|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (ResultRow r : mine) {
            Optional<ResultRow> netty = sameChannels(rows, "netty", r.param("channels"));
            Optional<ResultRow> none = sameChannels(rows, "none", r.param("channels"));
            md.append("| ")
                    .append(r.param("handler"))
                    .append(" | ")
                    .append(r.param("channels"))
                    .append(" | ")
                    .append(ns(r.score()))
                    .append(" | ")
                    .append(cpu(r))
                    .append(" | ")
                    .append(bytes(r.allocBytes()))
                    .append(" | ")
                    .append(netty.map(n -> ratio(r.cpu() / n.cpu())).orElse("–"))
                    .append(" | ")
                    .append(none.map(z -> ns(r.cpu() - z.cpu())).orElse("–"))
                    .append(" | ")
                    .append(none.flatMap(z -> netty.map(n -> ratio((r.cpu() - z.cpu()) / (n.cpu() - z.cpu()))))
                            .orElse("–"))
                    .append(" |\n");
        }
        if (handlerRows(rows, "wheel").isEmpty()) {
            md.append("\nWheelIdleStateHandler was not in this build: only Netty's handler was measured.\n");
        }
        md.append("\n");
    }

    private static void memory(StringBuilder md, List<MemoryFootprint.Measurement> memory) {
        if (memory.isEmpty()) {
            return;
        }
        md.append("## 6. Memory per pending timer\n\n");
        md.append("Heap retained per pending timer: heap used after full GCs (Serial collector, a JVM per "
                + "measurement) before and after scheduling, divided by the number of timers; JOL's "
                + "GraphLayout of the structure where it is one object. Deadlines 1 to 31 s ahead.\n\n");
        md.append("| contender | pending | heap B/timer | JOL B/timer | ours ÷ this |\n|---|---:|---:|---:|---:|\n");
        Map<Integer, Double> ours = memory.stream()
                .filter(m -> m.contender().equals(OURS))
                .collect(Collectors.toMap(
                        MemoryFootprint.Measurement::timers,
                        MemoryFootprint.Measurement::heapBytesPerTimer,
                        (a, b) -> a));
        for (MemoryFootprint.Measurement m : memory) {
            Double o = ours.get(m.timers());
            md.append("| ")
                    .append(m.contender())
                    .append(" | ")
                    .append(m.timers())
                    .append(" | ")
                    .append(bytes(m.heapBytesPerTimer()))
                    .append(" | ")
                    .append(Double.isNaN(m.jolBytesPerTimer()) ? "–" : bytes(m.jolBytesPerTimer()))
                    .append(" | ")
                    .append(o == null ? "–" : ratio(o / m.heapBytesPerTimer()))
                    .append(" |\n");
        }
        md.append("\n");
    }

    // ------------------------------------------------------------------ helpers

    /** Groups rows by every parameter except {@code except}, in numeric order of the parameters. */
    private static Map<String, List<ResultRow>> groups(List<ResultRow> rows, String except) {
        List<ResultRow> sorted = new ArrayList<>(rows);
        sorted.sort(Comparator.comparing((ResultRow r) -> key(r, except), SuiteReport::compareKeys));
        Map<String, List<ResultRow>> groups = new LinkedHashMap<>();
        for (ResultRow r : sorted) {
            groups.computeIfAbsent(label(r, except), k -> new ArrayList<>()).add(r);
        }
        return groups;
    }

    private static List<String> key(ResultRow r, String except) {
        return r.params().entrySet().stream()
                .filter(e -> !e.getKey().equals(except))
                .map(Map.Entry::getValue)
                .toList();
    }

    private static int compareKeys(List<String> a, List<String> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            int c = compareValues(a.get(i), b.get(i));
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(a.size(), b.size());
    }

    private static int compareValues(String a, String b) {
        try {
            return Long.compare(Long.parseLong(a), Long.parseLong(b));
        } catch (NumberFormatException e) {
            return a.compareTo(b);
        }
    }

    private static String label(ResultRow r, String except) {
        String label = r.params().entrySet().stream()
                .filter(e -> !e.getKey().equals(except))
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(", "));
        return label.isEmpty() ? "–" : label;
    }

    private static Optional<ResultRow> find(
            List<ResultRow> rows, String benchmark, String contender, String pending, String delayMs, String order) {
        return rows.stream()
                .filter(r -> r.benchmark().equals(benchmark)
                        && r.param("contender").equals(contender)
                        && r.param("pending").equals(pending)
                        && Objects.equals(r.param("delayMs"), delayMs)
                        && r.param("order").equals(order))
                .findFirst();
    }

    private static String line(String target, String measured, String verdict) {
        return "| " + target + " | " + measured + " | " + verdict + " |\n";
    }

    private static String cpu(ResultRow r) {
        if (Double.isNaN(r.callerCpu())) {
            return "–";
        }
        if (Contender.of(contenderOr(r, OURS)).threaded) {
            return ns(r.cpu()) + " (" + ns(r.callerCpu()) + " + " + ns(nanToZero(r.workerCpu())) + ")";
        }
        return ns(r.cpu());
    }

    private static String contenderOr(ResultRow r, String fallback) {
        String c = r.param("contender");
        return c.isEmpty() ? fallback : c;
    }

    private static double nanToZero(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    static String ns(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        if (v >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        return String.format(Locale.ROOT, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
    }

    static String count(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%,.0f", v);
    }

    static String bytes(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.1f", v);
    }

    static String ratio(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "–" : String.format(Locale.ROOT, "%.2f", v);
    }
}
