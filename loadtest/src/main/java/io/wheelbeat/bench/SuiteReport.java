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
 * with every contender's cost and the ratio ours / peer, the memory per pending timer and the
 * overflow-scheme design record.
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
    static final String HANDLER = "HandlerReadBatchBenchmark.readBatch";
    static final String OVERFLOW_REARM = "OverflowSchemeBenchmark.rearm";
    static final String OVERFLOW_EXPIRE = "OverflowSchemeBenchmark.expireBeyondTurn";

    private static final String OURS = Contender.OURS.id;
    private static final String OURS_THREADSAFE = Contender.OURS_WHEELTIMER.id;
    private static final String TARGET_PENDING = "524288";
    /** JMH's gc.alloc.rate.norm of an allocation-free loop is a small fraction of a byte. */
    private static final double ZERO_ALLOCATION = 0.5;

    /** What the report says about the run itself. */
    record RunInfo(String title, String command, String when, String machine, String jdk, String gc,
            String forkJvmArgs, String iterations, String load) {
    }

    private SuiteReport() {
    }

    static String render(List<ResultRow> rows, List<MemoryFootprint.Measurement> memory, RunInfo info) {
        StringBuilder md = new StringBuilder();
        md.append("# ").append(info.title()).append("\n\n");
        md.append("- When: ").append(info.when()).append("\n");
        md.append("- Command: `").append(info.command()).append("`\n");
        md.append("- Machine: ").append(info.machine()).append("\n");
        md.append("- JDK: ").append(info.jdk()).append("; GC: ").append(info.gc())
                .append("; fork JVM options: `").append(info.forkJvmArgs()).append("`\n");
        md.append("- JMH: ").append(info.iterations()).append("\n");
        md.append("- Load average (1 min) at start / end: ").append(info.load()).append("\n\n");
        md.append("How to read: `CPU ns/op` is the benchmark thread's CPU plus, for timers with threads of "
                + "their own, those threads' CPU (shown as caller + timer threads); `JVM CPU ns/op` is the whole process's, which adds the garbage "
                + "collector's threads (the cost of allocation) and some noise (JIT, JMH). `ours ÷ this` is ours "
                + "(TimerWheel on the owner thread) divided by the row's contender, on CPU per operation: "
                + "below 1 ours is cheaper (0.20 = 5x cheaper). `wall ns/op` is JMH's score.\n\n");

        targets(md, rows, memory);
        workload(md, "1. Re-arm (cancel + schedule, ours: reschedule)", REARM, rows);
        breakdown(md, rows);
        workload(md, "2. Schedule then cancel a fresh timer", SCHEDULE_CANCEL, rows);
        workload(md, "3. Expiry throughput: 524,288 timers spread over spreadTicks, per timer (schedule + fire)",
                EXPIRE, rows);
        workload(md, "3b. Idle advance across a gap, 65,536 far timers pending, per advance", IDLE_ADVANCE, rows);
        workload(md, "4. Burst: 32,768 timers due in the same tick, per timer (schedule + fire)", BURST, rows);
        handler(md, rows);
        memory(md, memory);
        overflow(md, rows);
        return md.toString();
    }

    // ------------------------------------------------------------------ targets

    private static void targets(StringBuilder md, List<ResultRow> rows, List<MemoryFootprint.Measurement> memory) {
        md.append("## Targets\n\n| target | measured | verdict |\n|---|---|---|\n");
        for (String order : List.of("random", "creation")) {
            for (String delay : delays(rows)) {
                rearmTargets(md, rows, order, delay);
            }
        }
        for (MemoryFootprint.Measurement m : memory) {
            if (m.contender().equals(OURS)) {
                md.append(line("≤ 32 B per pending timer (" + m.timers() + " pending, default settings)",
                        bytes(m.heapBytesPerTimer()) + " B", verdict(m.heapBytesPerTimer() <= 32)));
            }
        }
        Optional<ResultRow> netty = rows.stream().filter(r -> r.benchmark().equals(HANDLER)
                && r.param("handler").equals("netty")).findFirst();
        Optional<ResultRow> wheel = rows.stream().filter(r -> r.benchmark().equals(HANDLER)
                && r.param("handler").equals("wheel")).findFirst();
        if (netty.isPresent() && wheel.isPresent()) {
            md.append(line("handler per read batch no slower than IdleStateHandler",
                    "wall " + ns(wheel.get().score()) + " vs " + ns(netty.get().score()) + ", CPU "
                            + ns(wheel.get().cpu()) + " vs " + ns(netty.get().cpu()),
                    verdict(wheel.get().score() <= netty.get().score(), wheel.get().cpu() <= netty.get().cpu())));
            md.append(line("handler allocates 0 B per read batch", bytes(wheel.get().allocBytes()) + " B/op",
                    verdict(wheel.get().allocBytes() < ZERO_ALLOCATION)));
        } else {
            md.append(line("handler per read batch no slower than IdleStateHandler, 0 B",
                    "not measured: WheelIdleStateHandler was not in this build", "NOT RUN"));
        }
        md.append("\n");
    }

    private static void rearmTargets(StringBuilder md, List<ResultRow> rows, String order, String delay) {
        String when = "512k pending, T = " + delay + " ms, " + order + " order";
        Optional<ResultRow> ours = find(rows, REARM, OURS, TARGET_PENDING, delay, order);
        if (ours.isEmpty()) {
            return;
        }
        ResultRow o = ours.get();
        md.append(line("re-arm ≤ 20 ns on the owner thread (" + when + ")",
                "wall " + ns(o.score()) + ", CPU " + ns(o.cpu()), verdict(o.score() <= 20, o.cpu() <= 20)));
        md.append(line("re-arm allocates 0 B (" + when + ")", bytes(o.allocBytes()) + " B/op",
                verdict(o.allocBytes() < ZERO_ALLOCATION)));
        ratioTarget(md, rows, o, Contender.NETTY_HWT.id, "≥ 5x faster than HashedWheelTimer", 1 / 5.0, when);
        ratioTarget(md, rows, o, Contender.NETTY_EVENTLOOP.id, "≥ 3x faster than event-loop scheduling", 1 / 3.0, when);
        ratioTarget(md, rows, o, Contender.AGRONA.id, "within 1.3x of Agrona's wheel", 1.3, when);
        Optional<ResultRow> small = find(rows, REARM, OURS, "1024", delay, order);
        Optional<ResultRow> large = find(rows, REARM, OURS, "1048576", delay, order);
        if (small.isPresent() && large.isPresent()) {
            double wall = large.get().score() / small.get().score();
            double cpu = large.get().cpu() / small.get().cpu();
            md.append(line("re-arm at 1M pending ≤ 1.5x the cost at 1k (T = " + delay + " ms, " + order + " order)",
                    "wall " + ratio(wall) + " (" + ns(large.get().score()) + " / " + ns(small.get().score())
                            + "), CPU " + ratio(cpu),
                    verdict(wall <= 1.5, cpu <= 1.5)));
        }
    }

    private static void ratioTarget(StringBuilder md, List<ResultRow> rows, ResultRow ours, String peer,
            String what, double limit, String when) {
        find(rows, REARM, peer, TARGET_PENDING, ours.param("delayMs"), ours.param("order")).ifPresent(p -> {
            double cpu = ours.cpu() / p.cpu();
            double wall = ours.score() / (p.score() + nanToZero(p.workerCpu()));
            md.append(line("re-arm " + what + " (" + when + ")",
                    "ours ÷ " + peer + ": CPU " + ratio(cpu) + " (" + ns(ours.cpu()) + " / " + ns(p.cpu())
                            + "), wall+timer threads " + ratio(wall),
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
        List<ResultRow> mine = rows.stream().filter(r -> r.benchmark().equals(benchmark)).toList();
        if (mine.isEmpty()) {
            return;
        }
        md.append("## ").append(title).append("\n\n");
        boolean counted = mine.stream().anyMatch(r -> !Double.isNaN(r.firedTimers()));
        md.append("| parameters | contender | wall ns/op | CPU ns/op | JVM CPU ns/op | B/op | ours ÷ this "
                + "| ours-wheeltimer ÷ this |").append(counted ? " fired / iteration |\n" : "\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|").append(counted ? "---:|\n" : "\n");
        for (Map.Entry<String, List<ResultRow>> group : groups(mine, "contender").entrySet()) {
            List<ResultRow> members = new ArrayList<>(group.getValue());
            members.sort(Comparator.comparingInt(r -> Contender.of(r.param("contender")).ordinal()));
            Optional<ResultRow> ours = members.stream().filter(r -> r.param("contender").equals(OURS)).findFirst();
            Optional<ResultRow> threadsafe = members.stream()
                    .filter(r -> r.param("contender").equals(OURS_THREADSAFE)).findFirst();
            boolean first = true;
            for (ResultRow r : members) {
                md.append("| ").append(first ? group.getKey() : "").append(" | ").append(r.param("contender"))
                        .append(" | ").append(ns(r.score())).append(" | ").append(cpu(r))
                        .append(" | ").append(ns(r.processCpu())).append(" | ").append(bytes(r.allocBytes()))
                        .append(" | ").append(ours.map(o -> ratio(o.cpu() / r.cpu())).orElse("–"))
                        .append(" | ").append(threadsafe.map(o -> ratio(o.cpu() / r.cpu())).orElse("–"))
                        .append(counted ? " | " + count(r.firedTimers()) : "").append(" |\n");
                first = false;
            }
        }
        md.append("\n");
    }

    private static void breakdown(StringBuilder md, List<ResultRow> rows) {
        List<ResultRow> mine = rows.stream().filter(r -> r.benchmark().startsWith(BREAKDOWN)).toList();
        if (mine.isEmpty()) {
            return;
        }
        md.append("### 1b. What our re-arm's cost is made of (ours only, T = 2 s)\n\n");
        md.append("| pending | part | wall ns/op | CPU ns/op | B/op |\n|---|---|---:|---:|---:|\n");
        for (Map.Entry<String, List<ResultRow>> group : groups(mine, "delayMs").entrySet()) {
            for (ResultRow r : group.getValue()) {
                md.append("| ").append(r.param("pending")).append(" | ")
                        .append(r.benchmark().substring(BREAKDOWN.length())).append(" | ").append(ns(r.score()))
                        .append(" | ").append(cpu(r)).append(" | ").append(bytes(r.allocBytes())).append(" |\n");
            }
        }
        md.append("\n");
    }

    private static void handler(StringBuilder md, List<ResultRow> rows) {
        List<ResultRow> mine = rows.stream().filter(r -> r.benchmark().equals(HANDLER)).toList();
        if (mine.isEmpty()) {
            return;
        }
        Optional<ResultRow> netty = mine.stream().filter(r -> r.param("handler").equals("netty")).findFirst();
        md.append("## 5. Idle handler per read batch (channelRead + channelReadComplete, EmbeddedChannel)\n\n");
        md.append("| handler | wall ns/op | CPU ns/op | B/op | this ÷ netty |\n|---|---:|---:|---:|---:|\n");
        for (ResultRow r : mine) {
            md.append("| ").append(r.param("handler")).append(" | ").append(ns(r.score())).append(" | ")
                    .append(cpu(r)).append(" | ").append(bytes(r.allocBytes())).append(" | ")
                    .append(netty.map(n -> ratio(r.cpu() / n.cpu())).orElse("–")).append(" |\n");
        }
        if (mine.stream().noneMatch(r -> r.param("handler").equals("wheel"))) {
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
        Map<Integer, Double> ours = memory.stream().filter(m -> m.contender().equals(OURS))
                .collect(Collectors.toMap(MemoryFootprint.Measurement::timers,
                        MemoryFootprint.Measurement::heapBytesPerTimer, (a, b) -> a));
        for (MemoryFootprint.Measurement m : memory) {
            Double o = ours.get(m.timers());
            md.append("| ").append(m.contender()).append(" | ").append(m.timers()).append(" | ")
                    .append(bytes(m.heapBytesPerTimer())).append(" | ")
                    .append(Double.isNaN(m.jolBytesPerTimer()) ? "–" : bytes(m.jolBytesPerTimer())).append(" | ")
                    .append(o == null ? "–" : ratio(o / m.heapBytesPerTimer())).append(" |\n");
        }
        md.append("\n");
    }

    private static void overflow(StringBuilder md, List<ResultRow> rows) {
        List<ResultRow> mine = rows.stream().filter(r -> r.benchmark().startsWith("OverflowSchemeBenchmark.")).toList();
        if (mine.isEmpty()) {
            return;
        }
        md.append("## Design record: overflow schemes (ours = hierarchical v2; rounds = the wheel before v2, "
                + "4096 or 65,536 slots; benchmark-only hierarchical prototype)\n\n");
        md.append("524,288 timers. `rearm`: re-arm a timer drawn at random at now + 30 s on the system clock; "
                + "`expireBeyondTurn`: timers due 30 s to 30 s + spreadMs ahead scheduled and all fired on virtual "
                + "time, per timer.\n\n");
        md.append("| benchmark | parameters | scheme | wall ns/op | CPU ns/op | B/op | ours ÷ this |\n");
        md.append("|---|---|---|---:|---:|---:|---:|\n");
        for (String benchmark : List.of(OVERFLOW_REARM, OVERFLOW_EXPIRE)) {
            List<ResultRow> bench = mine.stream().filter(r -> r.benchmark().equals(benchmark)).toList();
            for (Map.Entry<String, List<ResultRow>> group : groups(bench, "scheme").entrySet()) {
                Optional<ResultRow> ours = group.getValue().stream()
                        .filter(r -> r.param("scheme").equals("ours")).findFirst();
                for (ResultRow r : group.getValue()) {
                    md.append("| ").append(benchmark.substring(benchmark.indexOf('.') + 1)).append(" | ")
                            .append(group.getKey()).append(" | ").append(r.param("scheme")).append(" | ")
                            .append(ns(r.score())).append(" | ").append(cpu(r)).append(" | ")
                            .append(bytes(r.allocBytes())).append(" | ")
                            .append(ours.map(o -> ratio(o.cpu() / r.cpu())).orElse("–")).append(" |\n");
                }
            }
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
        return r.params().entrySet().stream().filter(e -> !e.getKey().equals(except)).map(Map.Entry::getValue).toList();
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
        String label = r.params().entrySet().stream().filter(e -> !e.getKey().equals(except))
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "));
        return label.isEmpty() ? "–" : label;
    }

    private static List<String> delays(List<ResultRow> rows) {
        return rows.stream().filter(r -> r.benchmark().equals(REARM)).map(r -> r.param("delayMs")).distinct()
                .sorted(SuiteReport::compareValues).toList();
    }

    private static Optional<ResultRow> find(List<ResultRow> rows, String benchmark, String contender,
            String pending, String delayMs, String order) {
        return rows.stream().filter(r -> r.benchmark().equals(benchmark)
                && r.param("contender").equals(contender) && r.param("pending").equals(pending)
                && Objects.equals(r.param("delayMs"), delayMs) && r.param("order").equals(order)).findFirst();
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
