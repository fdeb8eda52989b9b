package io.wheelbeat.netty.mqtt;

import static io.wheelbeat.netty.VirtualTime.advanceTo;
import static io.wheelbeat.netty.VirtualTime.now;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.wheelbeat.netty.UserEvents;
import io.wheelbeat.netty.heartbeat.HeartbeatFailedEvent;
import io.wheelbeat.netty.heartbeat.PongReceivedEvent;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The client-side MQTT keep-alive rules, in virtual time. */
class MqttClientKeepAliveHandlerTest {

    private static final long TICK = 1L << 20;

    private final UserEvents events = new UserEvents();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private EmbeddedChannel ch;

    private void start(MqttClientKeepAliveHandler.Builder builder) {
        ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.pipeline().addLast(builder.metrics(registry).build().newHandler(), events);
    }

    private static MqttConnectMessage connect(MqttVersion version, int keepAliveSeconds) {
        return MqttMessageBuilders.connect()
                .clientId("c1")
                .protocolVersion(version)
                .keepAlive(keepAliveSeconds)
                .build();
    }

    private static MqttConnAckMessage connAck(MqttConnectReturnCode code, Integer serverKeepAlive) {
        MqttProperties properties = new MqttProperties();
        if (serverKeepAlive != null) {
            properties.add(new MqttProperties.IntegerProperty(MqttProperties.SERVER_KEEP_ALIVE, serverKeepAlive));
        }
        return MqttMessageBuilders.connAck()
                .returnCode(code)
                .properties(properties)
                .build();
    }

    private long connected(MqttVersion version, int keepAlive, Integer serverKeepAlive) {
        ch.writeOutbound(connect(version, keepAlive));
        assertInstanceOf(MqttConnectMessage.class, ch.readOutbound());
        ch.writeInbound(connAck(MqttConnectReturnCode.CONNECTION_ACCEPTED, serverKeepAlive));
        assertInstanceOf(MqttConnAckMessage.class, ch.readInbound());
        return now(ch);
    }

    @Test
    void sendsPingreqWhenNothingWasSentForTheKeepAliveAndReportsTheRoundTrip() {
        start(MqttClientKeepAliveHandler.builder());
        long t0 = connected(MqttVersion.MQTT_3_1_1, 2, null);
        advanceTo(ch, t0 + SECONDS.toNanos(2) - 1);
        assertNull(ch.readOutbound());
        advanceTo(ch, t0 + SECONDS.toNanos(2) + TICK);
        assertSame(MqttMessage.PINGREQ, ch.readOutbound());
        advanceTo(ch, now(ch) + MILLISECONDS.toNanos(40));
        ch.writeInbound(MqttMessage.PINGRESP);
        assertNull(ch.readInbound(), "PINGRESP consumed");
        PongReceivedEvent pong = events.ofType(PongReceivedEvent.class).get(0);
        assertTrue(pong.roundTripNanos() >= MILLISECONDS.toNanos(40), pong.toString());
        assertEquals(1, registry.get("wheelbeat.heartbeat.pings.sent").counter().count());
    }

    @Test
    void writesPostponeThePingreq() {
        start(MqttClientKeepAliveHandler.builder());
        long t0 = connected(MqttVersion.MQTT_3_1_1, 2, null);
        advanceTo(ch, t0 + SECONDS.toNanos(1));
        ch.writeOutbound(MqttMessageBuilders.publish()
                .topicName("t")
                .qos(io.netty.handler.codec.mqtt.MqttQoS.AT_MOST_ONCE)
                .payload(io.netty.buffer.Unpooled.EMPTY_BUFFER)
                .build());
        ch.readOutbound();
        advanceTo(ch, t0 + SECONDS.toNanos(3) - 1);
        assertNull(ch.readOutbound());
        advanceTo(ch, t0 + SECONDS.toNanos(3) + TICK);
        assertSame(MqttMessage.PINGREQ, ch.readOutbound());
    }

    @Test
    void closesWhenThePingrespDoesNotComeWithinTheTimeout() {
        start(MqttClientKeepAliveHandler.builder().pingRespTimeout(Duration.ofMillis(500)));
        long t0 = connected(MqttVersion.MQTT_3_1_1, 2, null);
        advanceTo(ch, t0 + SECONDS.toNanos(2) + TICK);
        assertSame(MqttMessage.PINGREQ, ch.readOutbound());
        advanceTo(ch, t0 + MILLISECONDS.toNanos(2400));
        assertTrue(ch.isActive());
        advanceTo(ch, t0 + MILLISECONDS.toNanos(2500) + 2 * TICK);
        assertFalse(ch.isActive());
        assertEquals(1, events.ofType(HeartbeatFailedEvent.class).size());
        assertEquals(
                1,
                registry.get("wheelbeat.connection.closed")
                        .tag("reason", "heartbeat_timeout")
                        .counter()
                        .count());
    }

    @Test
    void neverPingsBeforeTheServerAcceptsTheConnection() {
        start(MqttClientKeepAliveHandler.builder());
        ch.writeOutbound(connect(MqttVersion.MQTT_3_1_1, 1));
        ch.readOutbound();
        advanceTo(ch, now(ch) + SECONDS.toNanos(30));
        assertNull(ch.readOutbound());
        ch.writeInbound(connAck(MqttConnectReturnCode.CONNECTION_REFUSED_NOT_AUTHORIZED, null));
        advanceTo(ch, now(ch) + SECONDS.toNanos(30));
        assertNull(ch.readOutbound());
    }

    @Test
    void anMqtt5ServerKeepAliveReplacesTheClientsOwn() {
        start(MqttClientKeepAliveHandler.builder());
        long t0 = connected(MqttVersion.MQTT_5, 60, 5);
        advanceTo(ch, t0 + SECONDS.toNanos(5) + TICK);
        assertSame(MqttMessage.PINGREQ, ch.readOutbound());
    }

    @Test
    void aKeepAliveOfZeroSendsNoPings() {
        start(MqttClientKeepAliveHandler.builder());
        long t0 = connected(MqttVersion.MQTT_3_1_1, 0, null);
        advanceTo(ch, t0 + SECONDS.toNanos(3600));
        assertNull(ch.readOutbound());
        assertTrue(ch.isActive());
    }
}
