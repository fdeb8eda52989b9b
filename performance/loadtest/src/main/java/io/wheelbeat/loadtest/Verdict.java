package io.wheelbeat.loadtest;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Who won on one measure, ours against theirs, from paired measurements: units (a round, or a
 * steady sub-window of a round) in which both sides were measured over the same time. The
 * ratio ours / theirs comes with a 95% percentile bootstrap interval; the bootstrap resamples
 * the rounds and, within each, its units, so that the interval carries the differences between
 * rounds (JVMs) as well as those within one. A row is won or lost only where the interval
 * excludes 1.0. Pure arithmetic with a fixed seed: the same units give the same call.
 *
 * <p>Immutable, thread-safe.
 */
final class Verdict {

    static final int RESAMPLES = 4000;
    private static final long SEED = 20261127L;
    /** Above this share of resamples with no ratio (theirs at or below zero), no interval is given. */
    private static final double MAX_UNDEFINED = 0.025;

    private Verdict() {}

    /** Which way a measure improves. */
    enum Better {
        /** Costs: bytes, CPU, tasks, lateness. */
        LOWER,
        /** Rates of useful work: the open rate. */
        HIGHER
    }

    /** The outcome for ours. */
    enum Outcome {
        WON("won", "won"),
        LOST("**lost**", "LOST"),
        WITHIN_NOISE("within noise", "within noise"),
        EQUAL("equal", "equal"),
        NO_INTERVAL("one value: no interval", "one value: no interval");

        private final String markdown;
        private final String plain;

        Outcome(String markdown, String plain) {
            this.markdown = markdown;
            this.plain = plain;
        }

        String markdown() {
            return markdown;
        }

        String plain() {
            return plain;
        }
    }

    /**
     * One paired unit: each side's measure as a numerator over a denominator (CPU over messages,
     * or a value over 1), and, for a difference against the baseline, the baseline's.
     *
     * @param round the round the unit belongs to: units of one round are resampled together
     * @param values ours' numerator and denominator, theirs', and optionally the baseline's
     */
    record Unit(int round, double... values) {

        Unit {
            if (values.length != 4 && values.length != 6) {
                throw new IllegalArgumentException("a unit has 4 or 6 values, got " + values.length);
            }
        }

        static Unit of(int round, double ours, double theirs) {
            return new Unit(round, ours, 1, theirs, 1);
        }
    }

    /**
     * A call on one measure.
     *
     * @param ours ours' value over every unit (minus the baseline's where there is one)
     * @param theirs theirs' value, the same way
     * @param ratio ours / theirs, NaN where that is no ratio
     * @param low the interval's lower end, NaN if none
     * @param high the interval's upper end, NaN if none
     * @param units how many paired units the call rests on
     */
    record Call(Outcome outcome, double ours, double theirs, double ratio, double low, double high, int units) {

        boolean hasInterval() {
            return !Double.isNaN(low);
        }
    }

    /** Ours against theirs over {@code units}, a measure that improves in the direction {@code better}. */
    static Call call(Better better, List<Unit> units) {
        if (units.isEmpty()) {
            throw new IllegalArgumentException("no units");
        }
        double[] point = statistic(units);
        double ratio = ratio(point);
        if (units.stream().allMatch(u -> u.values()[0] / u.values()[1] == u.values()[2] / u.values()[3])) {
            return new Call(Outcome.EQUAL, point[0], point[1], ratio, ratio, ratio, units.size());
        }
        if (units.size() < 2) {
            return new Call(Outcome.NO_INTERVAL, point[0], point[1], ratio, Double.NaN, Double.NaN, 1);
        }
        double[] interval = interval(units);
        if (interval == null) {
            return new Call(Outcome.WITHIN_NOISE, point[0], point[1], ratio, Double.NaN, Double.NaN, units.size());
        }
        return new Call(
                outcome(better, interval[0], interval[1]),
                point[0],
                point[1],
                ratio,
                interval[0],
                interval[1],
                units.size());
    }

    /**
     * A call from a ratio and its interval computed elsewhere (the sampling error of an
     * attribution); NaN ends mean no interval.
     */
    static Call call(Better better, double ours, double theirs, double low, double high, int units) {
        double ratio = theirs > 0 && ours >= 0 ? ours / theirs : Double.NaN;
        Outcome outcome = Double.isNaN(low) || Double.isNaN(high) ? Outcome.WITHIN_NOISE : outcome(better, low, high);
        return new Call(outcome, ours, theirs, ratio, low, high, units);
    }

    /** Compares counts, where any difference is real (missed idle events): no ratio, no interval. */
    static Call count(long ours, long theirs, int units) {
        Outcome outcome = ours == theirs ? Outcome.EQUAL : ours < theirs ? Outcome.WON : Outcome.LOST;
        return new Call(outcome, ours, theirs, Double.NaN, Double.NaN, Double.NaN, units);
    }

    private static Outcome outcome(Better better, double low, double high) {
        boolean below = high < 1;
        boolean above = low > 1;
        if (!below && !above) {
            return Outcome.WITHIN_NOISE;
        }
        return below == (better == Better.LOWER) ? Outcome.WON : Outcome.LOST;
    }

    /** Ours' and theirs' values over {@code units}: sums of numerators over sums of denominators. */
    private static double[] statistic(List<Unit> units) {
        int arms = units.get(0).values().length / 2;
        double[] num = new double[arms];
        double[] den = new double[arms];
        for (Unit u : units) {
            for (int a = 0; a < arms; a++) {
                num[a] += u.values()[2 * a];
                den[a] += u.values()[2 * a + 1];
            }
        }
        double ours = num[0] / den[0];
        double theirs = num[1] / den[1];
        if (arms == 3) {
            double base = num[2] / den[2];
            ours -= base;
            theirs -= base;
        }
        return new double[] {ours, theirs};
    }

    private static double ratio(double[] point) {
        return point[1] > 0 && point[0] >= 0 ? point[0] / point[1] : point[1] > 0 ? 0 : Double.NaN;
    }

    /** The 2.5th and 97.5th percentiles of the resampled ratio, or null where too many have none. */
    private static double[] interval(List<Unit> units) {
        List<List<Unit>> rounds = new ArrayList<>();
        units.stream()
                .map(Unit::round)
                .distinct()
                .sorted()
                .forEach(r ->
                        rounds.add(units.stream().filter(u -> u.round() == r).toList()));
        Random random = new Random(SEED);
        double[] ratios = new double[RESAMPLES];
        int undefined = 0;
        List<Unit> sample = new ArrayList<>(units.size());
        for (int b = 0; b < RESAMPLES; b++) {
            sample.clear();
            for (int r = 0; r < rounds.size(); r++) {
                List<Unit> round = rounds.get(random.nextInt(rounds.size()));
                for (int i = 0; i < round.size(); i++) {
                    sample.add(round.get(random.nextInt(round.size())));
                }
            }
            double[] point = statistic(sample);
            // Theirs at or below zero: ours is no better (+infinity) unless ours is too (no ratio).
            double ratio = point[1] > 0
                    ? Math.max(0, point[0]) / point[1]
                    : point[0] > 0 ? Double.POSITIVE_INFINITY : Double.NaN;
            if (Double.isNaN(ratio)) {
                undefined++;
                ratio = Double.POSITIVE_INFINITY;
            }
            ratios[b] = ratio;
        }
        if (undefined > MAX_UNDEFINED * RESAMPLES) {
            return null;
        }
        Arrays.sort(ratios);
        return new double[] {
            ratios[(int) Math.floor(0.025 * (RESAMPLES - 1))], ratios[(int) Math.ceil(0.975 * (RESAMPLES - 1))]
        };
    }
}
