package io.wheelbeat.netty.idle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.wheelbeat.netty.VirtualTime;
import io.wheelbeat.netty.heartbeat.HeartbeatHandler;
import io.wheelbeat.netty.http2.Http2KeepAliveHandler;
import io.wheelbeat.netty.internal.HandlerTimer;
import io.wheelbeat.netty.mqtt.MqttServerKeepAliveHandler;
import io.wheelbeat.netty.websocket.WebSocketKeepAliveHandler;
import java.time.Duration;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.openjdk.jol.vm.VM;

/**
 * The timer nodes one started keepalive holds, as {@link RetainedHeap} counts its heap: deadlines
 * that never overlap share a node, and a handler or ping loop with one deadline at a time is its own
 * node, so no keepalive holds a {@link HandlerTimer}. Here, beside {@link RetainedHeap}, which is this package's.
 */
class KeepAliveFootprintTest {

    private static RetainedHeap.Footprint started(Supplier<ChannelHandler[]> pipeline) {
        ChannelHandler[] measured = pipeline.get();
        ChannelHandler[] elsewhere = pipeline.get();
        EmbeddedChannel ch = VirtualTime.frozenChannel(measured);
        EmbeddedChannel other = VirtualTime.frozenChannel(elsewhere);
        RetainedHeap.Footprint footprint =
                RetainedHeap.of(measured[measured.length - 1], elsewhere[elsewhere.length - 1]);
        ch.finishAndReleaseAll();
        other.finishAndReleaseAll();
        System.out.println("footprint " + footprint);
        return footprint;
    }

    /** How many {@link HandlerTimer}s the footprint holds. */
    private static long handlerTimers(RetainedHeap.Footprint footprint) {
        long each = VM.current().sizeOf(new HandlerTimer(timer -> {}));
        return footprint.bytesByClass().getOrDefault(HandlerTimer.class.getSimpleName(), 0L) / each;
    }

    @Test
    void aHeartbeatHandlerPingingAndAnsweringHoldsNoTimerButItsPingLoop() {
        HeartbeatHandler.Factory heartbeats = HeartbeatHandler.builder()
                .sendPings(Duration.ofSeconds(1), channel -> "PING", "PONG"::equals)
                .answerPings("PING"::equals, (channel, ping) -> "PONG")
                .build();
        assertEquals(0, handlerTimers(started(() -> new ChannelHandler[] {heartbeats.newHandler()})));
    }

    @Test
    void anMqttServerKeepAliveIsItsOneTimer() {
        MqttServerKeepAliveHandler.Factory keepAlive =
                MqttServerKeepAliveHandler.builder().build();
        assertEquals(0, handlerTimers(started(() -> new ChannelHandler[] {keepAlive.newHandler()})));
    }

    @Test
    void aWebSocketKeepAliveHoldsNoTimer() {
        WebSocketKeepAliveHandler.Factory keepAlive = WebSocketKeepAliveHandler.builder()
                .pingInterval(Duration.ofSeconds(1))
                .build();
        assertEquals(0, handlerTimers(started(() ->
                new ChannelHandler[] {new WebSocketServerProtocolHandler("/ws"), keepAlive.newHandler()})));
    }

    @Test
    void anHttp2KeepAliveWithEveryRuleIsItsOneTimerBesideItsPingLoop() {
        Http2KeepAliveHandler.Factory keepAlive = Http2KeepAliveHandler.builder()
                .keepAliveTime(Duration.ofSeconds(10))
                .keepAliveWithoutCalls(true)
                .maxConnectionIdle(Duration.ofSeconds(30))
                .build();
        assertEquals(0, handlerTimers(started(() ->
                new ChannelHandler[] {Http2FrameCodecBuilder.forServer().build(), keepAlive.newHandler()})));
    }
}
