package io.wheelbeat.loadtest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The verdict of one size: a row per measure, ours against theirs (the handlers {@code wheel}
 * and {@code netty}, or the loop groups), each side's value, the ratio with its 95% interval and
 * who won ({@link Verdict}). Every comparison is paired: the arms ran side by side in the same
 * JVM, so a round, or a steady sub-window of a round, measured both under the same conditions.
 * Where the session ran the baseline arm, bytes and CPU are also given as the idle machinery's
 * own (minus the baseline of the same unit). Built from the results alone: no clock, no I/O.
 *
 * <p>Immutable.
 */
final class VerdictTable {

    static final String BASELINE = IdleHandlerKind.NONE.id();

    /** How a measure's paired units are read off the runs of one round. */
    interface Units {
        /** @param side ours, theirs and (if the measure needs it) the baseline, all of one round */
        List<Verdict.Unit> of(int round, List<RunResult> side);
    }

    /** One measure: a name, a unit, which way it improves, whether it is against the baseline, and its units. */
    record Measure(String name, String unit, Verdict.Better better, boolean needsBaseline, Units units) {}

    /** A per-round value of each side. */
    private static Units perRound(Function<RunResult, Double> value) {
        return (round, side) -> {
            double[] v = new double[side.size() * 2];
            for (int a = 0; a < side.size(); a++) {
                v[2 * a] = value.apply(side.get(a));
                v[2 * a + 1] = 1;
            }
            return List.of(new Verdict.Unit(round, v));
        };
    }

    /** A per-sub-window numerator and denominator of each side. */
    private static Units perWindow(
            Function<RunResult.Window, Double> numerator,
            java.util.function.BiFunction<RunResult, RunResult.Window, Double> denominator) {
        return (round, side) -> {
            int windows = side.stream()
                    .mapToInt(r -> r.steady().windows().size())
                    .min()
                    .orElse(0);
            List<Verdict.Unit> units = new ArrayList<>();
            for (int w = 0; w < windows; w++) {
                double[] v = new double[side.size() * 2];
                for (int a = 0; a < side.size(); a++) {
                    RunResult.Window window = side.get(a).steady().windows().get(w);
                    v[2 * a] = numerator.apply(window);
                    v[2 * a + 1] = denominator.apply(side.get(a), window);
                }
                units.add(new Verdict.Unit(round, v));
            }
            return units;
        };
    }

    static final Measure IDLE_MACHINERY_BYTES = new Measure(
            "idle machinery per connection, minus none",
            "B",
            Verdict.Better.LOWER,
            true,
            perRound(r -> r.heap().liveBytesPerConnection()));
    static final Measure HEAP_BYTES = new Measure(
            "heap per connection",
            "B",
            Verdict.Better.LOWER,
            false,
            perRound(r -> r.heap().liveBytesPerConnection()));
    static final Measure LOOP_CPU = new Measure(
            "server-loop CPU per message, steady",
            "ns",
            Verdict.Better.LOWER,
            false,
            perWindow(w -> (double) w.loopCpuNanos(), (r, w) -> (double) w.messages()));
    static final Measure IDLE_MACHINERY_CPU = new Measure(
            "idle machinery CPU per message, steady, minus none",
            "ns",
            Verdict.Better.LOWER,
            true,
            perWindow(w -> (double) w.loopCpuNanos(), (r, w) -> (double) w.messages()));
    static final Measure LOOP_CPU_PER_CONNECTION = new Measure(
            "server-loop CPU per connection-second, steady",
            "ns",
            Verdict.Better.LOWER,
            false,
            perWindow(w -> (double) w.loopCpuNanos(), (r, w) -> r.steady().connections() * w.seconds()));
    static final Measure LOOP_TASKS = new Measure(
            "scheduled tasks on the server loops",
            "/s",
            Verdict.Better.LOWER,
            false,
            perRound(r -> r.timers().loopScheduledTasksPerSecond()));
    static final Measure LATENESS_P50 = new Measure(
            "lateness p50",
            "ms",
            Verdict.Better.LOWER,
            false,
            perRound(r -> r.idle().lateness().p50Ms()));
    static final Measure LATENESS_P99 = new Measure(
            "lateness p99",
            "ms",
            Verdict.Better.LOWER,
            false,
            perRound(r -> r.idle().lateness().p99Ms()));
    static final Measure LOOP_ALLOCATION = new Measure(
            "server-loop allocation per message, steady",
            "B",
            Verdict.Better.LOWER,
            false,
            perWindow(w -> (double) w.loopAllocatedBytes(), (r, w) -> (double) w.messages()));
    static final Measure OPEN_RATE = new Measure(
            "open rate", "connections/s", Verdict.Better.HIGHER, false, perRound(RunResult::openRatePerSecond));
    /** Not read through units: counts and the JFR attribution have calls of their own. */
    static final Measure WRONG_IDLE_EVENTS =
            new Measure("missed + false idle events", "", Verdict.Better.LOWER, false, null);

    static final Measure IDLE_CPU_SAMPLED =
            new Measure("idle machinery CPU per message, JFR samples", "ns", Verdict.Better.LOWER, false, null);

    /** One measure's row. */
    record Row(Measure measure, Verdict.Call call) {}

    /**
     * The most work one run of a wheel's driving task did (timers fired plus moved), for an arm
     * that uses a wheel; not a comparison, since Netty's scheduler has no such run.
     *
     * @param largest the largest over the arm's loops and rounds
     * @param byRound the largest of each round, in round order
     * @param bound what the engine promises a run never exceeds
     */
    record WheelRun(int connections, String arm, int largest, List<Integer> byRound, int bound) {}

    private final int connections;
    private final String ours;
    private final String theirs;
    private final int rounds;
    private final List<Row> rows;
    /** The machine's 1-minute load average at the starts and ends of the rounds. */
    private final double loadMin;

    private final double loadMax;
    private final int cores;
    private final RunResult.Gc gcOfFirstRound;
    private final List<WheelRun> wheelRuns;

    private VerdictTable(
            int connections,
            String ours,
            String theirs,
            int rounds,
            List<Row> rows,
            List<WheelRun> wheelRuns,
            double loadMin,
            double loadMax,
            int cores,
            RunResult.Gc gc) {
        this.connections = connections;
        this.ours = ours;
        this.theirs = theirs;
        this.rounds = rounds;
        this.rows = List.copyOf(rows);
        this.wheelRuns = List.copyOf(wheelRuns);
        this.loadMin = loadMin;
        this.loadMax = loadMax;
        this.cores = cores;
        this.gcOfFirstRound = gc;
    }

    /**
     * The verdict of the runs of one size, {@code ours} against {@code theirs}, or empty if the
     * runs do not include both in some round.
     */
    static Optional<VerdictTable> of(int connections, List<RunResult> runs, String ours, String theirs) {
        List<Integer> rounds = runs.stream()
                .filter(r -> r.connectionsRequested() == connections)
                .map(RunResult::round)
                .distinct()
                .sorted()
                .filter(round -> find(runs, connections, round, ours).isPresent()
                        && find(runs, connections, round, theirs).isPresent())
                .toList();
        if (rounds.isEmpty()) {
            return Optional.empty();
        }
        boolean baseline = rounds.stream()
                .allMatch(round -> find(runs, connections, round, BASELINE).isPresent());
        List<Row> rows = new ArrayList<>();
        long oursWrong = 0;
        long theirsWrong = 0;
        for (int round : rounds) {
            oursWrong += wrong(find(runs, connections, round, ours).orElseThrow());
            theirsWrong += wrong(find(runs, connections, round, theirs).orElseThrow());
        }
        rows.add(new Row(WRONG_IDLE_EVENTS, Verdict.count(oursWrong, theirsWrong, rounds.size())));
        List<Measure> measures = new ArrayList<>();
        measures.add(baseline ? IDLE_MACHINERY_BYTES : HEAP_BYTES);
        measures.add(LOOP_CPU);
        if (baseline) {
            measures.add(IDLE_MACHINERY_CPU);
        }
        for (Measure m : measures) {
            rows.add(new Row(m, Verdict.call(m.better(), units(m, runs, connections, rounds, ours, theirs))));
        }
        rows.add(new Row(IDLE_CPU_SAMPLED, sampled(runs, connections, rounds, ours, theirs)));
        // Maxima (lateness max, worst loop lag) are single events: no row, they flip between
        // identical sessions; the run-by-run table and the timeline keep them.
        for (Measure m :
                List.of(LOOP_CPU_PER_CONNECTION, LOOP_TASKS, LATENESS_P50, LATENESS_P99, LOOP_ALLOCATION, OPEN_RATE)) {
            rows.add(new Row(m, Verdict.call(m.better(), units(m, runs, connections, rounds, ours, theirs))));
        }
        List<RunResult> sized = runs.stream()
                .filter(r -> r.connectionsRequested() == connections)
                .toList();
        List<Double> loads = sized.stream()
                .flatMap(r ->
                        Stream.of(r.machine().loadAverageAtStart(), r.machine().loadAverageAtEnd()))
                .toList();
        return Optional.of(new VerdictTable(
                connections,
                ours,
                theirs,
                rounds.size(),
                rows,
                wheelRuns(sized),
                loads.stream().mapToDouble(Double::doubleValue).min().orElse(-1),
                loads.stream().mapToDouble(Double::doubleValue).max().orElse(-1),
                sized.get(0).machine().cores(),
                sized.get(0).gc()));
    }

    /** Each arm with a wheel among {@code sized}, the runs of one size, by its first appearance. */
    private static List<WheelRun> wheelRuns(List<RunResult> sized) {
        List<WheelRun> result = new ArrayList<>();
        sized.stream()
                .filter(r -> r.timers().largestWheelRun() >= 0)
                .map(RunResult::handler)
                .distinct()
                .forEach(arm -> {
                    List<Integer> byRound = sized.stream()
                            .filter(r -> r.handler().equals(arm))
                            .sorted(java.util.Comparator.comparingInt(RunResult::round))
                            .map(r -> r.timers().largestWheelRun())
                            .toList();
                    result.add(new WheelRun(
                            sized.get(0).connectionsRequested(),
                            arm,
                            byRound.stream().mapToInt(Integer::intValue).max().orElseThrow(),
                            byRound,
                            TimerAccounting.WHEEL_RUN_BOUND));
                });
        return result;
    }

    private static long wrong(RunResult r) {
        return r.idle().missed() + r.idle().falseIdle();
    }

    private static List<Verdict.Unit> units(
            Measure m, List<RunResult> runs, int connections, List<Integer> rounds, String ours, String theirs) {
        List<Verdict.Unit> units = new ArrayList<>();
        for (int round : rounds) {
            List<RunResult> side = new ArrayList<>(List.of(
                    find(runs, connections, round, ours).orElseThrow(),
                    find(runs, connections, round, theirs).orElseThrow()));
            if (m.needsBaseline()) {
                side.add(find(runs, connections, round, BASELINE).orElseThrow());
            }
            units.addAll(m.units().of(round, side));
        }
        return units;
    }

    /**
     * The JFR attribution over every round: each side's idle share of its samples times its
     * steady loop CPU per message; the interval from the binomial sampling error of both shares
     * (normal on the log of the ratio).
     */
    private static Verdict.Call sampled(
            List<RunResult> runs, int connections, List<Integer> rounds, String ours, String theirs) {
        double[] o = pooled(runs, connections, rounds, ours);
        double[] t = pooled(runs, connections, rounds, theirs);
        double oursValue = o[0] / o[1] * o[2];
        double theirsValue = t[0] / t[1] * t[2];
        if (o[0] == 0 || t[0] == 0 || o[1] == 0 || t[1] == 0) {
            return Verdict.call(Verdict.Better.LOWER, oursValue, theirsValue, Double.NaN, Double.NaN, rounds.size());
        }
        double relative = Math.sqrt((1 - o[0] / o[1]) / o[0] + (1 - t[0] / t[1]) / t[0]);
        double ratio = oursValue / theirsValue;
        return Verdict.call(
                Verdict.Better.LOWER,
                oursValue,
                theirsValue,
                ratio * Math.exp(-1.96 * relative),
                ratio * Math.exp(1.96 * relative),
                rounds.size());
    }

    /** Idle samples, samples, and steady loop CPU per message of one arm over the rounds. */
    private static double[] pooled(List<RunResult> runs, int connections, List<Integer> rounds, String arm) {
        double idle = 0;
        double samples = 0;
        double cpu = 0;
        double messages = 0;
        for (int round : rounds) {
            RunResult r = find(runs, connections, round, arm).orElseThrow();
            idle += r.steady().attribution().idleSamples();
            samples += r.steady().attribution().samples();
            for (RunResult.Window w : r.steady().windows()) {
                cpu += w.loopCpuNanos();
                messages += w.messages();
            }
        }
        return new double[] {idle, samples, messages == 0 ? 0 : cpu / messages};
    }

    static Optional<RunResult> find(List<RunResult> runs, int connections, int round, String arm) {
        return runs.stream()
                .filter(r -> r.handler().equals(arm) && r.connectionsRequested() == connections && r.round() == round)
                .findFirst();
    }

    List<Row> rows() {
        return rows;
    }

    List<WheelRun> wheelRuns() {
        return wheelRuns;
    }

    int connections() {
        return connections;
    }

    String ours() {
        return ours;
    }

    String theirs() {
        return theirs;
    }

    /** The table as Markdown, with a heading line saying what it compares. */
    String markdown() {
        StringBuilder md = new StringBuilder();
        md.append(heading()).append("\n\n");
        md.append("| measure | ")
                .append(ours)
                .append(" | ")
                .append(theirs)
                .append(" | ")
                .append(ours)
                .append(" ÷ ")
                .append(theirs)
                .append(" [95% interval] | verdict |\n|---|---:|---:|---:|---|\n");
        for (Row row : rows) {
            md.append("| ")
                    .append(name(row))
                    .append(" | ")
                    .append(number(row.call().ours()))
                    .append(" | ")
                    .append(number(row.call().theirs()))
                    .append(" | ")
                    .append(ratio(row.call()))
                    .append(" | ")
                    .append(row.call().outcome().markdown())
                    .append(" |\n");
        }
        md.append('\n').append(wheelRunsLine()).append(footnote()).append('\n');
        return md.toString();
    }

    /** The table as aligned plain text, for the console. */
    String plain() {
        List<String[]> lines = new ArrayList<>();
        lines.add(new String[] {"measure", ours, theirs, ours + "/" + theirs + " [95% interval]", "verdict"});
        for (Row row : rows) {
            lines.add(new String[] {
                name(row),
                number(row.call().ours()),
                number(row.call().theirs()),
                ratio(row.call()),
                row.call().outcome().plain()
            });
        }
        int[] width = new int[5];
        for (String[] line : lines) {
            for (int i = 0; i < width.length; i++) {
                width[i] = Math.max(width[i], line[i].length());
            }
        }
        StringBuilder text = new StringBuilder(heading()).append('\n');
        for (String[] line : lines) {
            text.append(String.format(
                                    Locale.ROOT,
                                    "  %-" + width[0] + "s  %" + width[1] + "s  %" + width[2] + "s  %" + width[3]
                                            + "s  %s%n",
                                    line[0],
                                    line[1],
                                    line[2],
                                    line[3],
                                    line[4])
                            .stripTrailing())
                    .append('\n');
        }
        return text.append(wheelRunsLine()).append(footnote()).append('\n').toString();
    }

    /** The wheel runs as one line, or nothing where no arm uses a wheel. */
    private String wheelRunsLine() {
        if (wheelRuns.isEmpty()) {
            return "";
        }
        StringBuilder line = new StringBuilder(String.format(
                Locale.ROOT,
                "Largest run of a wheel's driving task "
                        + "(timers fired + moved, over the arm's loops; the engine's bound %,d):",
                wheelRuns.get(0).bound()));
        for (WheelRun w : wheelRuns) {
            line.append(String.format(
                    Locale.ROOT,
                    " %s %,d%s (by round: %s);",
                    w.arm(),
                    w.largest(),
                    w.largest() > w.bound() ? " OVER THE BOUND" : "",
                    String.join(
                            ", ",
                            w.byRound().stream()
                                    .map(v -> String.format(Locale.ROOT, "%,d", v))
                                    .toList())));
        }
        line.setLength(line.length() - 1);
        return line.append(".\n").toString();
    }

    private String heading() {
        return String.format(
                Locale.ROOT,
                "Verdict at %,d connections, %s against %s side by side: %d round%s",
                connections,
                ours,
                theirs,
                rounds,
                rounds == 1 ? "" : "s, arm order rotated");
    }

    private String footnote() {
        StringBuilder note = new StringBuilder("Won or lost only where the 95% interval of the ratio excludes 1.0 "
                + "(bootstrap over rounds and steady sub-windows; JFR row: sampling error). ");
        note.append(String.format(
                Locale.ROOT,
                "GC is the JVM's, shared by the arms: %,d collections, %,.0f ms "
                        + "in total, longest %,.0f ms (round 1).",
                gcOfFirstRound.collections(),
                gcOfFirstRound.totalPauseMs(),
                gcOfFirstRound.maxPauseMs()));
        if (loadMin >= 0) {
            // The run's own threads keep about one load unit per core busy.
            note.append(String.format(
                    Locale.ROOT,
                    " Machine load (1-minute average, this run's threads included) " + "%.1f to %.1f on %d cores%s",
                    loadMin,
                    loadMax,
                    cores,
                    loadMax > 2 * cores
                            ? ": other work shared the CPU; the arms shared it alike, but lateness and misses "
                                    + "reflect it."
                            : "."));
        }
        return note.toString();
    }

    private static String name(Row row) {
        return row.measure().name()
                + (row.measure().unit().isEmpty() ? "" : " (" + row.measure().unit() + ")");
    }

    private static String ratio(Verdict.Call call) {
        if (Double.isNaN(call.ratio())) {
            return "-";
        }
        String r = String.format(Locale.ROOT, "%.2f", call.ratio());
        return call.hasInterval()
                ? r + " [" + String.format(Locale.ROOT, "%.2f", call.low()) + " to "
                        + (Double.isInfinite(call.high()) ? "inf" : String.format(Locale.ROOT, "%.2f", call.high()))
                        + "]"
                : r;
    }

    /** Three significant figures or so, grouped thousands: 0.451, 5.09, 13.7, 2,450. */
    static String number(double v) {
        if (Double.isNaN(v)) {
            return "-";
        }
        double a = Math.abs(v);
        String format = a >= 100 || v == Math.rint(v) ? "%,.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f";
        return String.format(Locale.ROOT, format, v);
    }
}
