package io.wheelbeat.loadtest;

import java.util.Arrays;
import java.util.List;

/**
 * Who won on one measure, ours against theirs, over one or more runs each. Pure arithmetic on
 * the measured values, no clock: a verdict is called only where the two sides' min-max ranges do
 * not overlap; where they overlap the difference is "within noise". With one run a side, the
 * range is a single value, so a call is made but flagged: one run cannot tell a difference from
 * noise. A cost at or below zero on both sides (a difference against a baseline run that came
 * out below it) is within noise too: neither side measurably costs anything.
 *
 * <p>Immutable, thread-safe.
 */
final class Verdict {

    private Verdict() {
    }

    /** Which way a measure improves. */
    enum Better {
        /** Costs: bytes, CPU, tasks, lateness, pauses. */
        LOWER,
        /** Rates of useful work: the open rate. */
        HIGHER
    }

    /** The outcome for ours. */
    enum Outcome {
        WON("won", "won"),
        LOST("**lost**", "LOST"),
        WITHIN_NOISE("within noise", "within noise"),
        EQUAL("equal", "equal");

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
     * The values of one side on one measure, one per run.
     *
     * @param median the middle value (the mean of the two middle ones for an even count)
     * @param runs how many runs the values come from
     */
    record Spread(double median, double min, double max, int runs) {

        Spread {
            if (runs < 1 || !(min <= median && median <= max)) {
                throw new IllegalArgumentException("not a spread: median " + median + ", range " + min + " to "
                        + max + ", " + runs + " runs");
            }
        }

        static Spread of(List<Double> values) {
            if (values.isEmpty()) {
                throw new IllegalArgumentException("no values");
            }
            double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            int n = sorted.length;
            double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
            return new Spread(median, sorted[0], sorted[n - 1], n);
        }

        static Spread of(double... values) {
            return of(Arrays.stream(values).boxed().toList());
        }

        boolean overlaps(Spread other) {
            return min <= other.max && other.min <= max;
        }

        boolean isPoint() {
            return min == max;
        }
    }

    /**
     * A verdict on one measure.
     *
     * @param ratio ours' median over theirs', or NaN where that is no ratio (a median at or
     *     below zero, as a difference against a baseline can be)
     * @param spreadKnown whether both sides ran at least twice, so that the ranges mean something
     */
    record Call(Outcome outcome, double ratio, boolean spreadKnown) {
    }

    /** Ours against theirs on a measure that improves in the direction {@code better}. */
    static Call call(Better better, Spread ours, Spread theirs) {
        double ratio = ours.median() >= 0 && theirs.median() > 0 ? ours.median() / theirs.median() : Double.NaN;
        boolean spreadKnown = ours.runs() >= 2 && theirs.runs() >= 2;
        Outcome outcome;
        if (ours.isPoint() && theirs.isPoint() && ours.min() == theirs.min()) {
            outcome = Outcome.EQUAL;
        } else if (ours.overlaps(theirs) || (better == Better.LOWER && ours.max() <= 0 && theirs.max() <= 0)) {
            outcome = Outcome.WITHIN_NOISE;
        } else {
            boolean oursLower = ours.max() < theirs.min();
            outcome = oursLower == (better == Better.LOWER) ? Outcome.WON : Outcome.LOST;
        }
        return new Call(outcome, ratio, spreadKnown);
    }
}
