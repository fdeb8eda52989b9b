package io.wheelbeat.netty.mqtt;

import static io.wheelbeat.netty.VirtualTime.advanceTo;
import static io.wheelbeat.netty.VirtualTime.now;
import static io.wheelbeat.netty.VirtualTime.pendingTimers;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttReasonCodes;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.wheelbeat.netty.UserEvents;
import io.wheelbeat.netty.deadline.ConnectionDeadlineHandler;
import io.wheelbeat.netty.deadline.FirstMessageTimeoutEvent;
import io.wheelbeat.netty.heartbeat.PingLimits;
import io.wheelbeat.netty.heartbeat.TooManyPingsEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The server-side MQTT keep-alive rules, in virtual time. */
class MqttServerKeepAliveHandlerTest {

    /** The shared wheels' tick: a timer fires at most this long after its deadline. */
    private static final long TICK = 1L << 20;

    private UserEvents events;
    private long start;

    private EmbeddedChannel channel(MqttServerKeepAliveHandler.Builder builder) {
        return channelAt(0, builder);
    }

    /** A channel whose handler starts when the clock reads {@code origin} (plus a little). */
    private EmbeddedChannel channelAt(long origin, MqttServerKeepAliveHandler.Builder builder) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.advanceTimeBy(origin - now(ch), java.util.concurrent.TimeUnit.NANOSECONDS);
        events = new UserEvents();
        ch.pipeline().addLast(builder.build().newHandler(), events);
        start = now(ch);
        return ch;
    }

    private static MqttConnectMessage connect(MqttVersion version, int keepAliveSeconds) {
        return MqttMessageBuilders.connect()
                .clientId("c1")
                .protocolVersion(version)
                .keepAlive(keepAliveSeconds)
                .build();
    }

    private static MqttMessage publish() {
        return MqttMessageBuilders.publish()
                .topicName("t")
                .qos(MqttQoS.AT_MOST_ONCE)
                .payload(Unpooled.wrappedBuffer(new byte[] {1}))
                .build();
    }

    private static MqttConnAckMessage accepted() {
        return MqttMessageBuilders.connAck()
                .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED)
                .build();
    }

    private static List<Object> outbound(EmbeddedChannel ch) {
        List<Object> out = new ArrayList<>();
        Object msg;
        while ((msg = ch.readOutbound()) != null) {
            out.add(msg);
        }
        return out;
    }

    private static MqttMessageType type(Object msg) {
        return ((MqttMessage) msg).fixedHeader().messageType();
    }

    private static byte disconnectReason(Object msg) {
        assertEquals(MqttMessageType.DISCONNECT, type(msg));
        return ((MqttReasonCodeAndPropertiesVariableHeader) ((MqttMessage) msg).variableHeader()).reasonCode();
    }

    private static Integer serverKeepAlive(Object connAck) {
        MqttProperties.MqttProperty<?> p = ((MqttConnAckMessage) connAck)
                .variableHeader()
                .properties()
                .getProperty(MqttProperties.SERVER_KEEP_ALIVE);
        return p == null ? null : (Integer) p.value();
    }

    @Nested
    class TheDeadline {

        @Test
        void closesAClientSilentForOneAndAHalfTimesItsKeepAliveAndNotBefore() {
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder());
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 10));
            advanceTo(ch, start + SECONDS.toNanos(15) - 1);
            assertTrue(ch.isActive());
            advanceTo(ch, start + SECONDS.toNanos(15) + TICK);
            assertFalse(ch.isActive());
            assertEquals(
                    10, events.ofType(MqttKeepAliveTimeoutEvent.class).get(0).keepAliveSeconds());
            assertEquals(0, pendingTimers(ch));
        }

        @Test
        void everyPacketRestartsTheDeadline() {
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder());
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 10));
            advanceTo(ch, start + SECONDS.toNanos(14));
            ch.writeInbound(publish());
            advanceTo(ch, start + SECONDS.toNanos(28));
            ch.writeInbound(MqttMessage.PINGREQ);
            advanceTo(ch, start + SECONDS.toNanos(28 + 15) - 1);
            assertTrue(ch.isActive());
            advanceTo(ch, start + SECONDS.toNanos(28 + 15) + TICK);
            assertFalse(ch.isActive());
        }

        @Test
        void aKeepAliveOfZeroSetsNoDeadline() {
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder());
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 0));
            advanceTo(ch, start + SECONDS.toNanos(100_000));
            assertTrue(ch.isActive());
            assertEquals(0, pendingTimers(ch));
        }

        @Test
        void anMqtt5ClientIsToldKeepAliveTimeoutBeforeTheClose() {
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder());
            ch.writeInbound(connect(MqttVersion.MQTT_5, 2));
            advanceTo(ch, start + SECONDS.toNanos(3) + TICK);
            assertFalse(ch.isActive());
            assertEquals(
                    MqttReasonCodes.Disconnect.KEEP_ALIVE_TIMEOUT.byteValue(), disconnectReason(ch.readOutbound()));
        }

        /**
         * Near the top of the clock's range. Not across the wrap, nor near Long.MIN_VALUE: an
         * EmbeddedChannel's clock only moves forward from 0 and Netty's scheduler clamps deadlines
         * past Long.MAX_VALUE (its real loops count from their own start and never get there). The
         * handler compares readings by difference only.
         */
        @Test
        void holdsNearTheTopOfTheClocksRange() {
            for (long origin : new long[] {Long.MAX_VALUE - SECONDS.toNanos(60)}) {
                EmbeddedChannel ch = channelAt(origin, MqttServerKeepAliveHandler.builder());
                ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 4));
                advanceTo(ch, start + SECONDS.toNanos(3));
                ch.writeInbound(MqttMessage.PINGREQ);
                advanceTo(ch, start + SECONDS.toNanos(9) - 1);
                assertTrue(ch.isActive(), "origin " + origin);
                advanceTo(ch, start + SECONDS.toNanos(9) + TICK);
                assertFalse(ch.isActive(), "origin " + origin);
            }
        }
    }

    @Nested
    class Pings {

        @Test
        void answersPingreqWithPingrespAndConsumesIt() {
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder());
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 30));
            assertInstanceOf(MqttConnectMessage.class, ch.readInbound());
            ch.writeInbound(MqttMessage.PINGREQ, publish());
            assertEquals(MqttMessageType.PUBLISH, type(ch.readInbound()));
            assertNull(ch.readInbound());
            assertSame(MqttMessage.PINGRESP, ch.readOutbound());
        }

        @Test
        void aBatchOfPingreqsIsAnsweredWithOneFlush() {
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder().pingLimits(PingLimits.OFF));
            ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(1 << 20, 1 << 20)); // the 1000 answers fit
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 30));
            int[] flushes = {0};
            ch.pipeline().addFirst(new io.netty.channel.ChannelOutboundHandlerAdapter() {
                @Override
                public void flush(io.netty.channel.ChannelHandlerContext ctx) {
                    flushes[0]++;
                    ctx.flush();
                }
            });
            Object[] flood = new Object[1000];
            java.util.Arrays.fill(flood, MqttMessage.PINGREQ);
            ch.writeInbound(flood);
            assertEquals(1, flushes[0]);
            assertEquals(1000, outbound(ch).size());
            assertTrue(ch.isActive());
        }

        @Test
        void byDefaultAPingreqFloodIsClosedAtItsFourthPingreq() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder().metrics(registry));
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 30));
            Object[] flood = new Object[1000];
            java.util.Arrays.fill(flood, MqttMessage.PINGREQ);
            ch.writeInbound(flood);
            assertFalse(ch.isActive());
            assertEquals(3, outbound(ch).size(), "answered until the 3rd strike");
            assertEquals(
                    1.0,
                    registry.get("wheelbeat.connection.closed")
                            .tag("reason", "too_many_pings")
                            .counter()
                            .count());
        }

        @Test
        void pingreqsWhileUnwritableAreAnsweredByOnePingrespWhenTheChannelDrains() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder()
                    .pingLimits(PingLimits.OFF)
                    .metrics(registry));
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 30));
            ch.readInbound();
            ch.config().setWriteBufferWaterMark(new WriteBufferWaterMark(64 << 10, 64 << 10));
            Object[] flood = new Object[100_000];
            java.util.Arrays.fill(flood, MqttMessage.PINGREQ);
            for (Object pingreq : flood) { // one read batch, its answers not yet flushed
                ch.pipeline().fireChannelRead(pingreq);
            }
            assertFalse(ch.isWritable());
            long answered = (long)
                    registry.get("wheelbeat.heartbeat.pings.answered").counter().count();
            // About 96 bytes counted per queued message: the answers stop at the 64 KiB high mark.
            assertTrue(answered >= 600 && answered <= 700, "answered before the high mark: " + answered);
            ch.pipeline().fireChannelReadComplete(); // flushed: the peer reads them, the channel drains
            assertTrue(ch.isWritable());
            assertEquals(answered + 1, outbound(ch).size(), "one PINGRESP for all the PINGREQs that waited");
            assertTrue(ch.isActive());
        }

        @Test
        void pingreqsFasterThanTheMinimumIntervalCloseAfterTheStrikes() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder()
                    .metrics(registry)
                    .pingLimits(PingLimits.of(Duration.ofSeconds(1), 3)));
            ch.writeInbound(connect(MqttVersion.MQTT_5, 30));
            ch.writeInbound(MqttMessage.PINGREQ, MqttMessage.PINGREQ, MqttMessage.PINGREQ);
            assertTrue(ch.isActive(), "the first is in time, two strikes so far");
            ch.writeInbound(MqttMessage.PINGREQ, MqttMessage.PINGREQ);
            assertFalse(ch.isActive());
            assertEquals(3, events.ofType(TooManyPingsEvent.class).get(0).strikes());
            List<Object> out = outbound(ch);
            assertEquals(List.of(MqttMessage.PINGRESP, MqttMessage.PINGRESP, MqttMessage.PINGRESP), out.subList(0, 3));
            assertEquals(MqttReasonCodes.Disconnect.MESSAGE_RATE_TOO_HIGH.byteValue(), disconnectReason(out.get(3)));
            assertEquals(
                    1,
                    registry.get("wheelbeat.connection.closed")
                            .tag("reason", "too_many_pings")
                            .counter()
                            .count());
            assertEquals(
                    3,
                    registry.get("wheelbeat.heartbeat.ping.strikes").counter().count());
            assertEquals(
                    3,
                    registry.get("wheelbeat.heartbeat.pings.answered").counter().count());
        }

        @Test
        void pingreqsAtTheMinimumIntervalAreFine() {
            EmbeddedChannel ch =
                    channel(MqttServerKeepAliveHandler.builder().pingLimits(PingLimits.of(Duration.ofSeconds(1), 3)));
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 30));
            for (int i = 1; i <= 20; i++) {
                advanceTo(ch, start + SECONDS.toNanos(i));
                ch.writeInbound(MqttMessage.PINGREQ);
            }
            assertTrue(ch.isActive());
            assertEquals(20, outbound(ch).size());
        }
    }

    @Nested
    class ConnectFirst {

        /** The time allowed for the CONNECT is the first-message timeout of a deadline handler before it. */
        private EmbeddedChannel withFirstMessageTimeout(SimpleMeterRegistry registry) {
            EmbeddedChannel ch = new EmbeddedChannel();
            ch.freezeTime();
            events = new UserEvents();
            ch.pipeline()
                    .addLast(
                            ConnectionDeadlineHandler.builder()
                                    .firstMessageTimeout(Duration.ofSeconds(3))
                                    .metrics(registry)
                                    .build()
                                    .newHandler(),
                            MqttServerKeepAliveHandler.builder()
                                    .metrics(registry)
                                    .build()
                                    .newHandler(),
                            events);
            start = now(ch);
            return ch;
        }

        @Test
        void aConnectionThatSendsNoConnectIsClosedAtTheFirstMessageTimeout() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = withFirstMessageTimeout(registry);
            assertEquals(1, pendingTimers(ch), "the deadline's: the keep-alive's waits for the CONNECT");
            advanceTo(ch, start + SECONDS.toNanos(3) - 1);
            assertTrue(ch.isActive());
            advanceTo(ch, start + SECONDS.toNanos(3) + TICK);
            assertFalse(ch.isActive());
            assertEquals(
                    SECONDS.toNanos(3),
                    events.ofType(FirstMessageTimeoutEvent.class).get(0).timeoutNanos());
            assertEquals(
                    1,
                    registry.get("wheelbeat.connection.closed")
                            .tag("reason", "first_message_timeout")
                            .counter()
                            .count());
        }

        private static double protocolErrorCloses(SimpleMeterRegistry registry) {
            return registry.get("wheelbeat.connection.closed")
                    .tag("reason", "protocol_error")
                    .counter()
                    .count();
        }

        @Test
        void aFirstPacketTheDecoderFailedOnIsPassedOnThenTheConnectionIsClosedAsAProtocolError() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = withFirstMessageTimeout(registry);
            ch.pipeline().addFirst(new MqttDecoder());
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {0, 0})); // packet type 0 is reserved
            MqttMessage garbage = ch.readInbound();
            assertTrue(garbage.decoderResult().isFailure(), "passed on for the broker to answer");
            assertFalse(ch.isActive());
            assertEquals(1, protocolErrorCloses(registry));
        }

        @Test
        void aConnectInTimeLeavesTheKeepAliveInCharge() {
            EmbeddedChannel ch = withFirstMessageTimeout(new SimpleMeterRegistry());
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 10));
            advanceTo(ch, start + SECONDS.toNanos(15) - 1);
            assertTrue(ch.isActive());
            advanceTo(ch, start + SECONDS.toNanos(15) + TICK);
            assertFalse(ch.isActive());
            assertEquals(1, events.ofType(MqttKeepAliveTimeoutEvent.class).size());
            assertTrue(events.ofType(FirstMessageTimeoutEvent.class).isEmpty());
        }

        @Test
        void aPingreqBeforeConnectIsAProtocolErrorThatCloses() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder().metrics(registry));
            ch.writeInbound(MqttMessage.PINGREQ);
            assertFalse(ch.isActive());
            assertNull(ch.readInbound());
            assertEquals(List.of(), outbound(ch), "no PINGRESP, and no DISCONNECT before CONNECT");
            assertEquals(1, protocolErrorCloses(registry));
        }

        @Test
        void aSecondConnectIsAProtocolErrorAndAnMqtt5ClientIsToldSo() {
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder());
            ch.writeInbound(connect(MqttVersion.MQTT_5, 30));
            ch.writeInbound(connect(MqttVersion.MQTT_5, 30));
            assertFalse(ch.isActive());
            assertInstanceOf(MqttConnectMessage.class, ch.readInbound());
            assertNull(ch.readInbound());
            assertEquals(MqttReasonCodes.Disconnect.PROTOCOL_ERROR.byteValue(), disconnectReason(ch.readOutbound()));
        }
    }

    @Nested
    class AllowedKeepAlive {

        private MqttServerKeepAliveHandler.Builder limits(SimpleMeterRegistry registry) {
            return MqttServerKeepAliveHandler.builder()
                    .metrics(registry)
                    .minKeepAlive(10)
                    .maxKeepAlive(300);
        }

        @Test
        void anMqtt3ClientAskingForMoreThanTheMaximumIsRefusedWithIdentifierRejected() {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            EmbeddedChannel ch = channel(limits(registry));
            ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 301));
            assertFalse(ch.isActive());
            assertNull(ch.readInbound(), "the application never sees the CONNECT");
            MqttConnAckMessage refusal = ch.readOutbound();
            assertEquals(
                    MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED,
                    refusal.variableHeader().connectReturnCode());
            assertEquals(
                    1,
                    registry.get("wheelbeat.connection.closed")
                            .tag("reason", "keepalive_out_of_range")
                            .counter()
                            .count());
        }

        @Test
        void anMqtt3ClientAskingForLessThanTheMinimumOrForNoneIsRefused() {
            for (int keepAlive : new int[] {9, 0}) {
                EmbeddedChannel ch = channel(limits(new SimpleMeterRegistry()));
                ch.writeInbound(connect(MqttVersion.MQTT_3_1, keepAlive));
                assertFalse(ch.isActive(), "keep-alive " + keepAlive);
            }
        }

        @Test
        void anMqtt3ClientWithinTheRangeIsPassedOn() {
            for (int keepAlive : new int[] {10, 300}) {
                EmbeddedChannel ch = channel(limits(new SimpleMeterRegistry()));
                ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, keepAlive));
                assertTrue(ch.isActive());
                assertInstanceOf(MqttConnectMessage.class, ch.readInbound());
            }
        }

        @Test
        void anMqtt5ClientGetsTheNearestAllowedValueAsServerKeepAliveAndIsHeldToIt() {
            EmbeddedChannel ch = channel(limits(new SimpleMeterRegistry()));
            ch.writeInbound(connect(MqttVersion.MQTT_5, 0));
            assertInstanceOf(MqttConnectMessage.class, ch.readInbound());
            ch.writeOutbound(accepted());
            assertEquals(300, serverKeepAlive(ch.readOutbound()));
            advanceTo(ch, start + SECONDS.toNanos(450) - 1);
            assertTrue(ch.isActive());
            advanceTo(ch, start + SECONDS.toNanos(450) + TICK);
            assertFalse(ch.isActive());
        }

        @Test
        void anMqtt5ClientBelowTheMinimumIsRaisedToIt() {
            EmbeddedChannel ch = channel(limits(new SimpleMeterRegistry()));
            ch.writeInbound(connect(MqttVersion.MQTT_5, 1));
            ch.writeOutbound(accepted());
            assertEquals(10, serverKeepAlive(ch.readOutbound()));
            advanceTo(ch, start + SECONDS.toNanos(14));
            assertTrue(ch.isActive(), "held to 1.5 x 10 s, not 1.5 x 1 s");
        }

        @Test
        void anMqtt5ClientWithinTheRangeGetsTheApplicationsConnAckUntouched() {
            EmbeddedChannel ch = channel(limits(new SimpleMeterRegistry()));
            ch.writeInbound(connect(MqttVersion.MQTT_5, 60));
            MqttConnAckMessage ack = accepted();
            ch.writeOutbound(ack);
            assertSame(ack, ch.readOutbound());
        }

        @Test
        void aServerKeepAliveTheApplicationSetsIsTheOneInForce() {
            EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder());
            ch.writeInbound(connect(MqttVersion.MQTT_5, 60));
            MqttProperties properties = new MqttProperties();
            properties.add(new MqttProperties.IntegerProperty(MqttProperties.SERVER_KEEP_ALIVE, 4));
            ch.writeOutbound(MqttMessageBuilders.connAck()
                    .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED)
                    .properties(properties)
                    .build());
            assertEquals(4, serverKeepAlive(ch.readOutbound()));
            advanceTo(ch, start + SECONDS.toNanos(6) + TICK);
            assertFalse(ch.isActive());
        }

        @Test
        void settingsAreCheckedWhenConfigured() {
            assertThrows(
                    IllegalArgumentException.class,
                    () -> MqttServerKeepAliveHandler.builder().maxKeepAlive(0));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> MqttServerKeepAliveHandler.builder().minKeepAlive(65_536));
            assertThrows(
                    IllegalStateException.class,
                    () -> MqttServerKeepAliveHandler.builder()
                            .minKeepAlive(10)
                            .maxKeepAlive(5)
                            .build());
            MqttServerKeepAliveHandler.builder()
                    .pingLimits(PingLimits.of(Duration.ofMillis(100), 2))
                    .build();
            assertThrows(
                    IllegalArgumentException.class,
                    () -> MqttServerKeepAliveHandler.builder().pingLimits(PingLimits.of(Duration.ofMillis(-1), 3)));
        }
    }

    @Test
    void closingCancelsEveryTimer() {
        EmbeddedChannel ch = channel(MqttServerKeepAliveHandler.builder());
        ch.writeInbound(connect(MqttVersion.MQTT_3_1_1, 10));
        ch.close();
        assertEquals(0, pendingTimers(ch));
        assertTrue(events.ofType(MqttKeepAliveTimeoutEvent.class).isEmpty());
    }
}
