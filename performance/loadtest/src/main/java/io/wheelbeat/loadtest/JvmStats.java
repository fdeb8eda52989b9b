package io.wheelbeat.loadtest;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.RuntimeMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The JVM's view of a run: heap after a full collection, garbage-collection pauses and process
 * CPU time. Pauses come from the collectors' notifications, one per collection; collections the
 * load test itself asked for (to read the heap) are counted apart, so that the pauses reported
 * are the scenario's own. Concurrent collector phases are not pauses and are left out. Each pause
 * is also kept with its start time on the run's clock ({@link #secondsSinceStart()}), which the
 * progress samples share.
 *
 * <p>Thread-safe.
 */
final class JvmStats implements NotificationListener, AutoCloseable {

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();
    private static final RuntimeMXBean RUNTIME = ManagementFactory.getRuntimeMXBean();
    /** The causes of the collections the load test asks for: its heap readings. */
    private static final Set<String> EXPLICIT_CAUSES = Set.of("System.gc()", "Heap Inspection Initiated GC");

    private final List<NotificationEmitter> emitters = new ArrayList<>();
    private final List<String> collectors = new ArrayList<>();
    private long collections;
    private long pauseMillisTotal;
    private long pauseMillisMax;
    private long explicitCollections;
    private long explicitPauseMillis;
    private final List<RunResult.Pause> pauses = new ArrayList<>();
    /** JVM uptime when this object was made: the origin of the run's clock. */
    private final long originUptimeMillis = RUNTIME.getUptime();

    /** Starts listening to every garbage collector of this JVM. */
    JvmStats() {
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            collectors.add(gc.getName());
            if (gc instanceof NotificationEmitter) {
                NotificationEmitter emitter = (NotificationEmitter) gc;
                emitter.addNotificationListener(this, null, null);
                emitters.add(emitter);
            }
        }
    }

    @Override
    public void handleNotification(Notification notification, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info =
                GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
        if (info.getGcName().contains("Concurrent") || info.getGcName().contains("Cycles")) {
            return;
        }
        long millis = info.getGcInfo().getDuration();
        boolean explicit = EXPLICIT_CAUSES.contains(info.getGcCause());
        synchronized (this) {
            pauses.add(new RunResult.Pause(
                    (info.getGcInfo().getStartTime() - originUptimeMillis) / 1e3,
                    millis,
                    info.getGcName(),
                    info.getGcCause(),
                    explicit));
            if (explicit) {
                explicitCollections++;
                explicitPauseMillis += millis;
            } else {
                collections++;
                pauseMillisTotal += millis;
                pauseMillisMax = Math.max(pauseMillisMax, millis);
            }
        }
    }

    /** The collections since this object was made. */
    synchronized GcTotals totals() {
        return new GcTotals(collections, pauseMillisTotal, pauseMillisMax, explicitCollections, explicitPauseMillis);
    }

    /** Every stop-the-world collection since this object was made, in order. */
    synchronized List<RunResult.Pause> pauses() {
        return List.copyOf(pauses);
    }

    /** Seconds since this object was made, on the clock of the pauses' start times. */
    double secondsSinceStart() {
        return (RUNTIME.getUptime() - originUptimeMillis) / 1e3;
    }

    List<String> collectorNames() {
        return List.copyOf(collectors);
    }

    /** Process CPU time so far, all threads, in nanoseconds. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** Heap in use right now, garbage included. */
    static long usedHeap() {
        return MEMORY.getHeapMemoryUsage().getUsed();
    }

    /**
     * The live heap: one full collection, then the bytes of every reachable object by class, and
     * the heap the collector reports in use right after. One collection only: it stops the whole
     * JVM, clients and server alike, and a stop longer than the reader-idle limit minus the
     * longest heartbeat gap would make talking connections idle for real.
     */
    static HeapReading readHeap() {
        ClassHistogram live = ClassHistogram.take();
        return new HeapReading(usedHeap(), live);
    }

    /** Heap bytes allocated so far by every thread of this JVM (an approximation, as the JVM gives it). */
    static long allocatedBytes() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getTotalThreadAllocatedBytes();
    }

    /** The system's 1-minute load average, or -1 where the system does not tell. */
    static double loadAverage() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    /** Largest heap this JVM may use, in bytes. */
    static long maxHeap() {
        return Runtime.getRuntime().maxMemory();
    }

    @Override
    public void close() {
        for (NotificationEmitter emitter : emitters) {
            try {
                emitter.removeNotificationListener(this);
            } catch (ListenerNotFoundException e) {
                // already gone: nothing to undo
            }
        }
    }

    /**
     * One heap reading. The two differ: G1 counts whole regions' used parts, and a full
     * collection leaves the dead objects of nearly full regions in place (up to 5% of each) and
     * partly filled regions behind its compaction, so the heap in use carries some megabytes
     * that move from reading to reading; the live objects' bytes do not.
     *
     * @param usedBytes the heap the collector reports in use after the collection
     * @param live every reachable object's bytes, by class
     */
    record HeapReading(long usedBytes, ClassHistogram live) {
        long liveBytes() {
            return live.totalBytes();
        }
    }

    /** Collection counts and pauses since this object was made, in milliseconds as reported. */
    record GcTotals(
            long collections,
            long pauseMillisTotal,
            long pauseMillisMax,
            long explicitCollections,
            long explicitPauseMillis) {}
}
