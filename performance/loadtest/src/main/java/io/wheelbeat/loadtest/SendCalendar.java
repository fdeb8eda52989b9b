package io.wheelbeat.loadtest;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Sends the heartbeats of the client connections of one event loop. Connections wait in buckets
 * of {@link #STEP_NANOS} by their next send time; one fixed-rate task per loop sends each bucket
 * when its time comes and files every connection again at its next (jittered) time. So half a
 * million connections cost the client two scheduled tasks and four bytes of calendar each per
 * client loop, all allocated when the calendar is made (before the first heap reading), and
 * nothing on the server side depends on how the client keeps time.
 *
 * <p>Owned by its event loop: every method but {@link #start()} runs on it.
 */
final class SendCalendar implements Runnable {

    static final long STEP_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * One byte, shared: the server reads only the hello, so a heartbeat costs the client no
     * buffer of its own, and the server no release into another thread's pool (which the local
     * transport would otherwise charge to the server loop on every heartbeat). The local
     * transport hands the very object over and only reads it, so the local tier sends it as it
     * is and allocates nothing per heartbeat; a socket write moves the reader index, so the TCP
     * tier sends a duplicate.
     */
    private static final ByteBuf HEARTBEAT = Unpooled.unreleasableBuffer(
            Unpooled.directBuffer(1, 1).writeByte('h').asReadOnly());

    private final HeartbeatDriver driver;
    private final EventLoop loop;
    private final SplittableRandom random;
    private final long heartbeatNanos;
    private final double jitter;
    private final boolean burst;
    private final boolean shareHeartbeat;
    private final long burstEpochNanos;
    private final int mask;
    private final IndexBuckets buckets;
    /** The last step whose bucket has been sent. */
    private long sentStep;

    private long sent;
    private long maxLagNanos;

    SendCalendar(HeartbeatDriver driver, EventLoop loop, Settings settings, long seed, long burstEpochNanos) {
        this.driver = driver;
        this.loop = loop;
        this.random = new SplittableRandom(seed);
        this.heartbeatNanos = settings.heartbeatNanos();
        this.jitter = settings.jitter();
        this.burst = settings.burst();
        this.shareHeartbeat = settings.tier() == Tier.LOCAL;
        this.burstEpochNanos = burstEpochNanos;
        // Twice the longest gap, so a loop that falls behind still files connections ahead of itself.
        long stepsAhead = settings.maxHeartbeatGapNanos() / STEP_NANOS + 2;
        int bucketCount = Integer.highestOneBit((int) Math.min(1 << 24, 2 * stepsAhead + 64) - 1) << 1;
        this.mask = bucketCount - 1;
        // Any connection may land on this loop: one link for each.
        this.buckets = new IndexBuckets(bucketCount, settings.connections());
        this.sentStep = Clock.nanoTime() / STEP_NANOS;
    }

    void start() {
        loop.scheduleAtFixedRate(this, STEP_NANOS, STEP_NANOS, TimeUnit.NANOSECONDS);
    }

    /** A new connection: files it for its first heartbeat (its hello has just gone out). */
    void addNew(int index) {
        file(index, nextSendNanos(Clock.nanoTime()));
    }

    /** Heartbeats sent so far. */
    long sent() {
        return sent;
    }

    /** How far behind its schedule this sender has been at worst. */
    long maxLagNanos() {
        return maxLagNanos;
    }

    @Override
    public void run() {
        long now = Clock.nanoTime();
        long nowStep = now / STEP_NANOS;
        if (nowStep - sentStep > 1) {
            maxLagNanos = Math.max(maxLagNanos, (nowStep - sentStep - 1) * STEP_NANOS);
        }
        long silenceStart = driver.silenceStartNanos();
        while (sentStep < nowStep) {
            sentStep++;
            sendBucket((int) sentStep & mask, now, silenceStart);
        }
    }

    private void sendBucket(int bucket, long now, long silenceStart) {
        int next = buckets.takeAll(bucket); // file() never targets the bucket being sent, see file()
        while (next != IndexBuckets.NONE) {
            int index = next;
            next = buckets.next(index);
            Channel channel = driver.channel(index);
            if (channel == null || !channel.isActive() || driver.hasGoneSilent(index, now, silenceStart)) {
                continue; // dropped for good
            }
            channel.writeAndFlush(shareHeartbeat ? HEARTBEAT : HEARTBEAT.duplicate(), channel.voidPromise());
            sent++;
            file(index, nextSendNanos(now));
        }
    }

    private long nextSendNanos(long now) {
        if (burst) {
            return burstEpochNanos + ((now - burstEpochNanos) / heartbeatNanos + 1) * heartbeatNanos;
        }
        return now + Math.round(heartbeatNanos * (1 + jitter * (2 * random.nextDouble() - 1)));
    }

    /**
     * Files {@code index} in the bucket of {@code sendAtNanos}: never the bucket being sent or
     * one already passed (it goes in the next), never a full turn or more ahead (it goes in the
     * last bucket of the turn, so it is sent early rather than a turn late).
     */
    private void file(int index, long sendAtNanos) {
        long step = Math.min(Math.max(sendAtNanos / STEP_NANOS, sentStep + 1), sentStep + mask);
        buckets.add((int) step & mask, index);
    }

    EventLoop loop() {
        return loop;
    }
}
