package io.wheelbeat.loadtest;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a duration such as {@code 15s}, {@code 250ms}, {@code 2m}, {@code 1.5s} or
 * {@code 100000ns} into nanoseconds. The unit is required, so that {@code --reader-idle 15}
 * cannot silently mean 15 ns. Negative values are read as written and rejected by validation,
 * which names the option.
 */
final class DurationConverter implements ITypeConverter<Long> {

    private static final Pattern DURATION = Pattern.compile("(-?\\d+(?:\\.\\d+)?)\\s*(ns|us|ms|s|m)");

    @Override
    public Long convert(String value) {
        Matcher m = DURATION.matcher(value.trim());
        if (!m.matches()) {
            throw new TypeConversionException("'" + value + "' is not a duration (examples: 15s, 250ms, 2m)");
        }
        double amount = Double.parseDouble(m.group(1));
        double unitNanos;
        switch (m.group(2)) {
            case "ns":
                unitNanos = 1;
                break;
            case "us":
                unitNanos = 1e3;
                break;
            case "ms":
                unitNanos = 1e6;
                break;
            case "s":
                unitNanos = 1e9;
                break;
            default:
                unitNanos = 60e9;
                break;
        }
        double nanos = amount * unitNanos;
        if (Math.abs(nanos) > Long.MAX_VALUE / 2.0) {
            throw new TypeConversionException("'" + value + "' is too long a duration");
        }
        return Math.round(nanos);
    }

    /** Writes {@code nanos} so that {@link #convert} reads it back exactly. */
    static String format(long nanos) {
        if (nanos % 1_000_000_000L == 0) {
            return nanos / 1_000_000_000L + "s";
        }
        if (nanos % 1_000_000L == 0) {
            return nanos / 1_000_000L + "ms";
        }
        return nanos + "ns";
    }

    /** A short human form: {@code 15 s}, {@code 250 ms}. */
    static String human(long nanos) {
        if (nanos % 1_000_000_000L == 0) {
            return nanos / 1_000_000_000L + " s";
        }
        if (nanos % 1_000_000L == 0) {
            return nanos / 1_000_000L + " ms";
        }
        return String.format(java.util.Locale.ROOT, "%.3f ms", nanos / 1e6);
    }
}
