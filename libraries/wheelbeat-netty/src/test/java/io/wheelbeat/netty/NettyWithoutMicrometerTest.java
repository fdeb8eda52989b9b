package io.wheelbeat.netty;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.wheelbeat.core.ratelimit.KeyedRateLimiter;
import io.wheelbeat.core.ratelimit.RateLimit;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.MaxConnectionAge;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.idle.WheelIdleStateHandler;
import io.wheelbeat.netty.mqtt.MqttServerKeepAliveHandler;
import io.wheelbeat.netty.ratelimit.RateLimitHandler;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Micrometer is an optional dependency of netty-handler: this test runs in its own surefire
 * execution with Micrometer's jars removed from the class path (see the module's pom) and drives
 * the handlers, built without a meter registry, as a user without Micrometer would. Any handler
 * class that needed a Micrometer type to load or run would fail here with NoClassDefFoundError.
 */
class NettyWithoutMicrometerTest {

    private final UserEvents events = new UserEvents();

    @Test
    void micrometerIsNotOnTheClassPathOfThisRun() {
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.micrometer.core.instrument.MeterRegistry"));
    }

    @Test
    void theIdleHandlerFiresLikeNettys() {
        EmbeddedChannel ours = VirtualTime.frozenChannel(new WheelIdleStateHandler(100, 0, 0, MILLISECONDS), events);
        UserEvents nettysEvents = new UserEvents();
        EmbeddedChannel nettys = VirtualTime.frozenChannel(new IdleStateHandler(100, 0, 0, MILLISECONDS), nettysEvents);
        VirtualTime.advance(ours, 150);
        VirtualTime.advance(nettys, 150);
        assertEquals(List.of(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT), events.all());
        assertEquals(nettysEvents.all(), events.all());
        ours.finishAndReleaseAll();
        nettys.finishAndReleaseAll();
    }

    @Test
    void theIdleHandlerFromItsBuilderFires() {
        EmbeddedChannel ch = VirtualTime.frozenChannel(
                WheelIdleStateHandler.builder()
                        .allIdleTime(Duration.ofMillis(100))
                        .build()
                        .newHandler(),
                events);
        VirtualTime.advance(ch, 150);
        assertEquals(List.of(IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT), events.all());
        ch.finishAndReleaseAll();
    }

    @Test
    void theHeartbeatPingsAnIdleConnection() {
        EmbeddedChannel ch = VirtualTime.frozenChannel(
                HeartbeatHandler.builder()
                        .sendPings(Duration.ofMillis(100), channel -> "PING", "PONG"::equals)
                        .build()
                        .newHandler(),
                events);
        assertNull(ch.readOutbound());
        VirtualTime.advance(ch, 200);
        assertEquals("PING", ch.readOutbound());
        ch.finishAndReleaseAll();
    }

    @Test
    void theConnectionDeadlineClosesASilentConnection() {
        EmbeddedChannel ch = VirtualTime.frozenChannel(
                ConnectionDeadlineHandler.builder()
                        .firstMessageTimeout(Duration.ofMillis(100))
                        .build()
                        .newHandler(),
                events);
        VirtualTime.advance(ch, 99);
        assertTrue(ch.isActive());
        VirtualTime.advance(ch, 10);
        assertFalse(ch.isActive());
        ch.finishAndReleaseAll();
    }

    @Test
    void theSharedBuilderOptionsAndValueTypesNeedNoMicrometer() {
        EmbeddedChannel aged = VirtualTime.frozenChannel(
                ConnectionDeadlineHandler.builder()
                        .maxConnectionAge(
                                MaxConnectionAge.of(Duration.ofMillis(100)).withJitter(0))
                        .wheels(EventLoopWheels.shared())
                        .random(new Random(1))
                        .build()
                        .newHandler(),
                events);
        VirtualTime.advance(aged, 110);
        assertFalse(aged.isActive(), "closed at its age");
        EmbeddedChannel flooded = VirtualTime.frozenChannel(
                HeartbeatHandler.builder()
                        .answerPings("PING"::equals, (channel, ping) -> "PONG")
                        .pingLimits(PingLimits.of(Duration.ofSeconds(1), 1))
                        .build()
                        .newHandler(),
                new UserEvents());
        flooded.writeInbound("PING", "PING");
        assertFalse(flooded.isActive(), "the second ping within a second strikes out");
        aged.finishAndReleaseAll();
        flooded.finishAndReleaseAll();
    }

    @Test
    void theRateLimitDropsMessagesOverTheLimit() {
        EmbeddedChannel ch = VirtualTime.frozenChannel();
        KeyedRateLimiter<String> limiter = KeyedRateLimiter.builder(
                        RateLimit.slidingWindow(2, Duration.ofSeconds(1)),
                        EventLoopWheels.shared().wheelFor(ch.eventLoop()))
                .build();
        ch.pipeline()
                .addLast(RateLimitHandler.builder(limiter, (channel, msg) -> "tenant")
                        .perMessage()
                        .dropWhenOver()
                        .build());
        ch.writeInbound("a", "b", "c");
        assertEquals("a", ch.readInbound());
        assertEquals("b", ch.readInbound());
        assertNull(ch.readInbound(), "the third message in the window is dropped");
        ch.finishAndReleaseAll();
    }

    @Test
    void theMqttKeepAliveClosesASilentClient() {
        EmbeddedChannel ch = VirtualTime.frozenChannel(
                MqttServerKeepAliveHandler.builder().build().newHandler(), events);
        ch.writeInbound(MqttMessageBuilders.connect()
                .clientId("c1")
                .protocolVersion(MqttVersion.MQTT_3_1_1)
                .keepAlive(1)
                .build());
        VirtualTime.advanceTo(ch, VirtualTime.now(ch) + MILLISECONDS.toNanos(1_400));
        assertTrue(ch.isActive(), "within one and a half keepalives");
        VirtualTime.advanceTo(ch, VirtualTime.now(ch) + SECONDS.toNanos(1));
        assertFalse(ch.isActive(), "silent for more than one and a half keepalives");
        ch.finishAndReleaseAll();
    }
}
