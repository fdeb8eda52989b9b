package io.wheelbeat.loadtest;

import java.lang.management.ManagementFactory;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * The live heap by class, as {@code jcmd GC.class_histogram} gives it: a full collection, then
 * the instances and bytes of every class still reachable.
 *
 * @param bytes bytes by class name, as the JVM names classes ({@code [I}, {@code java.lang.String});
 *     a lambda's classes under one name ({@code Foo$$Lambda})
 */
record ClassHistogram(Map<String, Long> bytes) {

    /** Classes that grew or shrank by less than this per connection are left out of a report. */
    static final double SHOWN_BYTES = 0.5;

    private static final String DIAGNOSTIC_COMMAND = "com.sun.management:type=DiagnosticCommand";
    /** A lambda's hidden class is named anew in every JVM ({@code Foo$$Lambda$123/0x0000...}). */
    private static final Pattern LAMBDA_SUFFIX = Pattern.compile("\\$\\$Lambda\\$[0-9]+(/0x[0-9a-f]+)?");

    /** Takes a histogram of this JVM's live heap (one full collection). */
    static ClassHistogram take() {
        try {
            Object text = ManagementFactory.getPlatformMBeanServer()
                    .invoke(
                            new ObjectName(DIAGNOSTIC_COMMAND),
                            "gcClassHistogram",
                            new Object[] {new String[0]},
                            new String[] {String[].class.getName()});
            return parse((String) text);
        } catch (JMException e) {
            throw new IllegalStateException("cannot take a class histogram", e);
        }
    }

    /**
     * Parses the command's table, one class a line: {@code "  1:  123  4567  java.lang.String
     * (java.base@17)"} (rank, instances, bytes, name); the header and the total are skipped.
     */
    static ClassHistogram parse(String text) {
        Map<String, Long> bytes = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 4 || !f[0].endsWith(":")) {
                continue;
            }
            bytes.merge(LAMBDA_SUFFIX.matcher(f[3]).replaceAll("\\$\\$Lambda"), Long.parseLong(f[2]), Long::sum);
        }
        return new ClassHistogram(bytes);
    }

    /** Bytes over all classes. */
    long totalBytes() {
        return bytes.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Bytes by class, this histogram's minus {@code before}'s, every class of either. */
    Map<String, Long> growthSince(ClassHistogram before) {
        Set<String> classes = new HashSet<>(bytes.keySet());
        classes.addAll(before.bytes.keySet());
        Map<String, Long> growth = new LinkedHashMap<>();
        for (String c : classes) {
            growth.put(c, bytes.getOrDefault(c, 0L) - before.bytes.getOrDefault(c, 0L));
        }
        return growth;
    }

    /**
     * {@code growth} over {@code connections}, the classes that moved by at least {@code shown}
     * bytes per connection, largest first.
     */
    static Map<String, Double> perConnection(Map<String, Long> growth, int connections, double shown) {
        Map<String, Double> result = new LinkedHashMap<>();
        if (connections == 0) {
            return result;
        }
        growth.entrySet().stream()
                .filter(e -> Math.abs((double) e.getValue() / connections) >= shown)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .forEach(e -> result.put(e.getKey(), (double) e.getValue() / connections));
        return result;
    }
}
