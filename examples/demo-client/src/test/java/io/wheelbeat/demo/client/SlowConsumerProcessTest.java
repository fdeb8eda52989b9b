package io.wheelbeat.demo.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 13, item 2, over real sockets: a client that sends 64 KiB DATA frames within the message
 * limit and never reads, against the demo server in its own JVM with 64 MiB of direct memory,
 * while 8 well-behaved clients echo small frames.
 *
 * <p>Stated bounds: the never-reading client is closed as {@code slow_consumer} (its limit: 2 s
 * unwritable; the test allows 20 s from its first byte for the ramp), every well-behaved client
 * has echoes answered while the never-reading one is still connected and after it is gone, none
 * fails or is closed, and the server's direct memory (the JVM's direct buffer pool and the
 * allocator's direct memory) stays under 32 MiB. Before the guard the server held 150 to 160 MiB
 * for such a client within seconds, then failed with {@code OutOfMemoryError}, and well-behaved
 * clients waited over 5 s for their echoes. How long the echoes take depends on the CPU the
 * machine gives the processes, so the worst round trip is printed as a figure, not bounded.
 * The well-behaved clients run until 1 s after the never-reading one is closed.
 */
@Timeout(120)
class SlowConsumerProcessTest {

    private static final int WELL_BEHAVED = 8;
    /** How long the well-behaved clients go on after the never-reading one is closed. */
    private static final long AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final long MAX_RUN_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final double DIRECT_MEMORY_CAP = 32 << 20;
    private static final int DATA = 3;

    @Test
    void aClientThatNeverReadsIsClosedAsASlowConsumerAndNobodyElseSuffers() throws Exception {
        try (ServerProcess server = ServerProcess.start(
                List.of("-Xmx256m", "-XX:MaxDirectMemorySize=64m"),
                "--threads",
                "2",
                "--slow-consumer-timeout-ms",
                "2000")) {
            AtomicLong worstEchoNanos = new AtomicLong();
            AtomicLong echoes = new AtomicLong();
            AtomicLongArray echoesDuring = new AtomicLongArray(WELL_BEHAVED);
            AtomicLongArray echoesAfter = new AtomicLongArray(WELL_BEHAVED);
            AtomicLong hostileEndedAt = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            long start = System.nanoTime();
            for (int i = 0; i < WELL_BEHAVED; i++) {
                int client = i;
                threads.add(thread("well-behaved-" + i, failures, () -> {
                    try (Socket socket = new Socket(
                            server.address().getAddress(), server.address().getPort())) {
                        socket.setSoTimeout(30_000);
                        DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                        DataInputStream in = new DataInputStream(socket.getInputStream());
                        byte[] payload = new byte[64];
                        while (running(start, hostileEndedAt.get())) {
                            boolean hostileConnected = hostileEndedAt.get() == 0;
                            long sent = System.nanoTime();
                            out.writeByte(DATA);
                            out.writeInt(payload.length);
                            out.write(payload);
                            out.flush();
                            int type = in.readUnsignedByte();
                            in.readFully(new byte[in.readInt()]);
                            assertEquals(DATA, type);
                            worstEchoNanos.accumulateAndGet(System.nanoTime() - sent, Math::max);
                            echoes.incrementAndGet();
                            (hostileConnected ? echoesDuring : echoesAfter).incrementAndGet(client);
                            Thread.sleep(20);
                        }
                    }
                }));
            }
            AtomicReference<String> hostileEnd = new AtomicReference<>("still writing");
            AtomicLong hostileBytes = new AtomicLong();
            Thread hostile = thread("never-reads", failures, () -> {
                try (Socket socket = new Socket()) {
                    socket.setReceiveBufferSize(4096);
                    socket.connect(server.address(), 10_000);
                    DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                    byte[] payload = new byte[64 * 1024];
                    while (System.nanoTime() - start < MAX_RUN_NANOS) {
                        out.writeByte(DATA);
                        out.writeInt(payload.length);
                        out.write(payload);
                        out.flush();
                        hostileBytes.addAndGet(5 + payload.length);
                        Thread.sleep(2); // about 500 frames a second: within the 1,000 allowed
                    }
                } catch (IOException closedByTheServer) {
                    hostileEnd.set(closedByTheServer.toString());
                }
                hostileEndedAt.set(System.nanoTime());
            });
            threads.add(hostile);
            threads.forEach(Thread::start);

            double maxDirect = 0;
            double maxAllocatorDirect = 0;
            while (threads.stream().anyMatch(Thread::isAlive)
                    && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(60)) {
                maxDirect = Math.max(maxDirect, server.metric("jvm_buffer_memory_used_bytes", "id=\"direct\""));
                maxAllocatorDirect = Math.max(
                        maxAllocatorDirect, server.metric("netty_allocator_memory_used", "memory_type=\"direct\""));
                Thread.sleep(100);
            }
            for (Thread thread : threads) {
                thread.join(TimeUnit.SECONDS.toMillis(30));
            }
            double slowConsumers =
                    server.metric("wheelbeat_connection_closed_connections_total", "reason=\"slow_consumer\"");
            System.out.printf(
                    "slow consumer: closed %.1f s after it started (%s) having sent %d MiB; %d echoes to %d "
                            + "well-behaved clients (while it was connected: %s; after: %s), worst round trip %.1f ms; "
                            + "server direct memory at most %.1f MiB (JVM pool), %.1f MiB (allocator) (cap %.0f MiB)%n",
                    (hostileEndedAt.get() - start) / 1e9,
                    hostileEnd.get(),
                    hostileBytes.get() >> 20,
                    echoes.get(),
                    WELL_BEHAVED,
                    echoesDuring,
                    echoesAfter,
                    worstEchoNanos.get() / 1e6,
                    maxDirect / (1 << 20),
                    maxAllocatorDirect / (1 << 20),
                    DIRECT_MEMORY_CAP / (1 << 20));

            assertTrue(failures.isEmpty(), "client failures: " + failures);
            assertEquals(1.0, slowConsumers, "one connection closed as slow_consumer");
            assertTrue(
                    hostileEndedAt.get() - start < TimeUnit.SECONDS.toNanos(20),
                    "the never-reading client was " + "closed " + (hostileEndedAt.get() - start) / 1e9
                            + " s after it started: " + hostileEnd.get());
            for (int i = 0; i < WELL_BEHAVED; i++) {
                // Served throughout: not stuck behind the never-reading client, and not closed with it.
                assertTrue(
                        echoesDuring.get(i) > 0 && echoesAfter.get(i) > 0,
                        "well-behaved client " + i + ": "
                                + echoesDuring.get(i) + " echoes while the never-reading client was connected, "
                                + echoesAfter.get(i) + " after");
            }
            assertTrue(
                    maxDirect < DIRECT_MEMORY_CAP && maxAllocatorDirect < DIRECT_MEMORY_CAP,
                    "direct memory " + maxDirect + " / " + maxAllocatorDirect + " bytes");
            assertTrue(server.isAlive(), "the server is up");
            assertTrue(server.output().stream().noneMatch(line -> line.contains("OutOfMemoryError")), "no OOM");
        }
    }

    /** Whether the well-behaved clients go on: until a while after the never-reading one is closed. */
    private static boolean running(long start, long hostileEndedAt) {
        long now = System.nanoTime();
        return now - start < MAX_RUN_NANOS && (hostileEndedAt == 0 || now - hostileEndedAt < AFTER_NANOS);
    }

    private interface Body {
        void run() throws Exception;
    }

    private static Thread thread(String name, List<Throwable> failures, Body body) {
        Thread thread = new Thread(
                () -> {
                    try {
                        body.run();
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                },
                name);
        thread.setDaemon(true);
        return thread;
    }
}
