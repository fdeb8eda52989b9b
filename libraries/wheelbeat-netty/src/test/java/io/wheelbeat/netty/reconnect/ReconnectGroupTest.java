package io.wheelbeat.netty.reconnect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.wheelbeat.core.backoff.BackoffPolicy;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Connected;
import io.wheelbeat.netty.reconnect.ReconnectEvent.Connecting;
import io.wheelbeat.netty.reconnect.TestServer.Mode;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ReconnectGroupTest {

    @Test
    void grantsPermitsUpToTheLimit() {
        ReconnectGroup group = new ReconnectGroup(2);
        assertTrue(group.tryAcquire());
        assertTrue(group.tryAcquire());
        assertFalse(group.tryAcquire());
        assertEquals(2, group.attemptsInProgress());
    }

    @Test
    void releasedPermitCanBeTakenAgain() {
        ReconnectGroup group = new ReconnectGroup(1);
        assertTrue(group.tryAcquire());
        group.release();
        assertEquals(0, group.attemptsInProgress());
        assertTrue(group.tryAcquire());
    }

    @Test
    void releaseWithoutAPermitIsAnErrorAndChangesNothing() {
        ReconnectGroup group = new ReconnectGroup(1);
        assertThrows(IllegalStateException.class, group::release);
        assertEquals(0, group.attemptsInProgress());
        assertTrue(group.tryAcquire());
    }

    @Test
    void limitHoldsUnderConcurrentUse() throws Exception {
        int max = 3;
        ReconnectGroup group = new ReconnectGroup(max);
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread thread = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 50_000; i++) {
                    if (group.tryAcquire()) {
                        mostAtOnce.accumulateAndGet(holders.incrementAndGet(), Math::max);
                        holders.decrementAndGet();
                        group.release();
                    }
                }
            });
            thread.start();
            threads.add(thread);
        }
        go.countDown();
        for (Thread thread : threads) {
            thread.join();
        }
        assertTrue(mostAtOnce.get() <= max, "at most " + max + " at once, saw " + mostAtOnce.get());
        assertEquals(0, group.attemptsInProgress());
    }

    @Test
    void nonPositiveLimitIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new ReconnectGroup(0));
        assertThrows(IllegalArgumentException.class, () -> new ReconnectGroup(-5));
    }

    @Test
    void nullPermitWaitIsRejected() {
        assertThrows(NullPointerException.class, () -> new ReconnectGroup(1, null));
    }

    /**
     * Three real clients share one permit while each attempt is held open by a slow name lookup:
     * only one attempt runs at a time, the others wait on the wheel (20 ms per refusal, not a
     * spin), and all three connect in turn.
     */
    @Test
    void clientsOfAGroupTakeTurnsAndWaitOnTheWheel() throws Exception {
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        long waitNanos = TimeUnit.MILLISECONDS.toNanos(20);
        ReconnectGroup group = new ReconnectGroup(
                1,
                BackoffPolicy.exponential(Duration.ofNanos(waitNanos), Duration.ofNanos(waitNanos))
                        .build());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ReconnectMetrics metrics = new ReconnectMetrics(registry, Tags.empty());
        Counter deferred = registry.get("wheelbeat.reconnect.deferred").counter();
        TestResolver resolver = new TestResolver();
        resolver.hold();
        EventLog events = new EventLog();
        List<ReconnectingClient> clients = new ArrayList<>();
        try (TestServer server = TestServer.start(Mode.ECHO)) {
            Bootstrap bootstrap = new Bootstrap()
                    .group(loop)
                    .channel(NioSocketChannel.class)
                    .resolver(resolver)
                    .handler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {}
                    });
            long begin = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                ReconnectingClient client = ReconnectingClient.builder(bootstrap, "svc.test", server.port())
                        .group(group)
                        .metrics(metrics)
                        .listener(events)
                        .build();
                clients.add(client);
                client.start();
            }
            while (deferred.count() < 4) { // both waiters refused at least twice
                Thread.sleep(5);
            }
            assertEquals(1, resolver.heldLookups(), "one attempt in progress");
            assertEquals(1, group.attemptsInProgress());
            double refusals = deferred.count();
            long elapsed = System.nanoTime() - begin;
            double mostRefusals = 2 * (elapsed / (double) waitNanos + 1);
            assertTrue(refusals <= mostRefusals, refusals + " refusals in " + elapsed / 1e6 + " ms: a spin");

            for (int i = 0; i < 3; i++) {
                resolver.answerNext(InetAddress.getLoopbackAddress());
            }
            events.await(Connected.class, 3);
            // One event loop: with one permit, every attempt ends before the next one starts.
            List<Class<?>> order = new ArrayList<>();
            for (EventLog.Entry e : events.all()) {
                order.add(e.event().getClass());
            }
            assertEquals(
                    List.of(
                            Connecting.class,
                            Connected.class,
                            Connecting.class,
                            Connected.class,
                            Connecting.class,
                            Connected.class),
                    order);
            assertEquals(0, group.attemptsInProgress());
        } finally {
            for (ReconnectingClient client : clients) {
                client.close().get(10, TimeUnit.SECONDS);
            }
            loop.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(10, TimeUnit.SECONDS);
        }
    }
}
