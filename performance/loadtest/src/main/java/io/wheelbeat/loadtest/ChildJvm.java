package io.wheelbeat.loadtest;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts the JVMs of a session: one per run, so that each run's GC pauses, CPU time and heap are
 * its own, and the TCP tier's client process. They get this JVM's options (debuggers and agents
 * left out), the extra {@code --jvm-opt}s, and this JVM's class path.
 */
final class ChildJvm {

    private ChildJvm() {}

    /** The options a child JVM gets: this JVM's, then {@code extra} (later ones win). */
    static List<String> effectiveOptions(List<String> extra) {
        List<String> options = new ArrayList<>();
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-agentlib")
                    && !arg.startsWith("-javaagent")
                    && !arg.startsWith("-Xrunjdwp")
                    && !arg.startsWith("-Xdebug")) {
                options.add(arg);
            }
        }
        options.addAll(extra);
        return options;
    }

    /** {@code java <options> -cp <this class path>}, ready for a main class and its arguments. */
    static List<String> command(List<String> extraOptions) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(effectiveOptions(extraOptions));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        return command;
    }

    /** Runs {@code settings} (a round) in a child JVM and reads back its arms' results. */
    static List<RunResult> runWorker(Settings settings, Path resultFile, ObjectMapper json)
            throws IOException, InterruptedException {
        List<String> command = command(settings.jvmOptions());
        command.add(LoadTest.class.getName());
        command.add("--worker");
        command.add("--result-file");
        command.add(resultFile.toString());
        command.addAll(settings.toArgs());
        Process process = new ProcessBuilder(command).inheritIO().start();
        int exit = process.waitFor();
        if (exit != 0) {
            throw new IOException("round " + settings.round() + " with " + settings.connections()
                    + " connections failed (its JVM exited with " + exit + "); see its output above");
        }
        return json.readValue(
                resultFile.toFile(), json.getTypeFactory().constructCollectionType(List.class, RunResult.class));
    }
}
