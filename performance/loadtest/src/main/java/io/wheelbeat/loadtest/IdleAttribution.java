package io.wheelbeat.loadtest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Attributes the server loops' CPU to the idle machinery without a baseline: a JFR recording of
 * execution samples over the steady window, each sample of an arm's loop thread judged by its
 * stack. Walking from the executing frame toward the thread's root, the first frame that
 * decides is:
 * <ul>
 *   <li>idle machinery: Netty's {@code IdleStateHandler}, Netty's scheduler
 *       ({@code AbstractScheduledEventExecutor}, {@code ScheduledFutureTask},
 *       {@code DefaultPriorityQueue}), or wheelbeat's handlers, wheels and loop group
 *       ({@code io.wheelbeat.*} outside the load test);</li>
 *   <li>the pipeline ({@code AbstractChannelHandlerContext}, {@code DefaultChannelPipeline}):
 *       a handler passing a message or event on, so what runs above it is the next handler's
 *       work, not its own.</li>
 * </ul>
 * A sample with neither is the transport and the loop's own work. Samples are of Java frames
 * only, so the share is of the loops' Java time; the local transport runs no native code.
 */
final class IdleAttribution implements AutoCloseable {

    /** One execution sample per running thread every this often (JFR takes a few threads per period). */
    static final Duration SAMPLE_PERIOD = Duration.ofMillis(2);

    private static final int TOP_FRAMES = 5;
    private static final String[] IDLE_PREFIXES = {
        "io.netty.handler.timeout.IdleStateHandler",
        "io.netty.util.concurrent.AbstractScheduledEventExecutor",
        "io.netty.util.concurrent.ScheduledFutureTask",
        "io.netty.util.internal.DefaultPriorityQueue",
        "io.wheelbeat.core.",
        "io.wheelbeat.netty.",
    };
    private static final String[] PIPELINE_CLASSES = {
        "io.netty.channel.AbstractChannelHandlerContext", "io.netty.channel.DefaultChannelPipeline",
    };
    /**
     * The loop group's wrapper of Netty's task loop: it runs every task, so reaching it undecided means the
     * sample was Netty's own task running (the local transport delivers reads as tasks), as on Netty's loop.
     */
    private static final String LOOP_TASK_RUNNER = "io.wheelbeat.netty.loop.WheelIoEventLoop.runAllTasks";

    private final Recording recording = new Recording();

    IdleAttribution() {
        recording.enable("jdk.ExecutionSample").withPeriod(SAMPLE_PERIOD);
        recording.setToDisk(true);
    }

    void start() {
        recording.start();
    }

    /** Stops sampling and returns the samples of each arm's loops, by arm, read from a temporary file. */
    List<List<RecordedEvent>> stop(List<Set<String>> armThreadNames) throws IOException {
        recording.stop();
        Path file = Files.createTempFile("loadtest-steady", ".jfr");
        try {
            recording.dump(file);
            List<List<RecordedEvent>> byArm = new ArrayList<>();
            armThreadNames.forEach(n -> byArm.add(new ArrayList<>()));
            for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
                if (!event.getEventType().getName().equals("jdk.ExecutionSample")) {
                    continue;
                }
                var thread = event.getThread("sampledThread");
                String name = thread == null ? null : thread.getJavaName();
                for (int arm = 0; arm < armThreadNames.size(); arm++) {
                    if (armThreadNames.get(arm).contains(name)) {
                        byArm.get(arm).add(event);
                    }
                }
            }
            return byArm;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Override
    public void close() {
        recording.close();
    }

    /** One arm's attribution from its samples and its steady loop CPU per message. */
    static RunResult.Attribution attribute(List<RecordedEvent> samples, double loopNanosPerMessage) {
        List<List<String>> stacks = new ArrayList<>();
        for (RecordedEvent sample : samples) {
            RecordedStackTrace trace = sample.getStackTrace();
            List<String> frames = new ArrayList<>();
            if (trace != null) {
                for (RecordedFrame frame : trace.getFrames()) {
                    if (frame.isJavaFrame()) {
                        frames.add(frame.getMethod().getType().getName() + "."
                                + frame.getMethod().getName());
                    }
                }
            }
            stacks.add(frames);
        }
        return attributeStacks(stacks, loopNanosPerMessage);
    }

    /**
     * The attribution of stacks given as {@code class.method} names, executing frame first.
     * Pure, for tests.
     */
    static RunResult.Attribution attributeStacks(List<List<String>> stacks, double loopNanosPerMessage) {
        long idle = 0;
        Map<String, Long> frames = new HashMap<>();
        for (List<String> stack : stacks) {
            String decided = idleFrame(stack);
            if (decided != null) {
                idle++;
                frames.merge(decided, 1L, Long::sum);
            }
        }
        long n = stacks.size();
        double share = n == 0 ? 0 : (double) idle / n;
        double error = n == 0 ? 0 : Math.sqrt(share * (1 - share) / n);
        List<String> top = frames.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(TOP_FRAMES)
                .map(e -> e.getKey() + " " + e.getValue())
                .toList();
        return new RunResult.Attribution(n, idle, share, share * loopNanosPerMessage, error * loopNanosPerMessage, top);
    }

    /** The idle-machinery frame that decides {@code stack} (executing frame first), or null if it is not idle. */
    static String idleFrame(List<String> stack) {
        for (String frame : stack) {
            for (String pipeline : PIPELINE_CLASSES) {
                if (frame.startsWith(pipeline + ".")) {
                    return null;
                }
            }
            if (frame.equals(LOOP_TASK_RUNNER)) {
                return null;
            }
            if (!frame.startsWith("io.wheelbeat.loadtest.")) {
                for (String prefix : IDLE_PREFIXES) {
                    if (frame.startsWith(prefix)) {
                        return frame;
                    }
                }
            }
        }
        return null;
    }
}
