package io.wheelbeat.netty.websocket;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.wheelbeat.netty.VirtualTime;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One end of a WebSocket in an {@link EmbeddedChannel} (virtual time, frozen from the start), with
 * Netty's real HTTP codec and WebSocket protocol handler in front of the handlers under test; the
 * other end is played in bytes with Netty's own frame encoder and decoder (masked frames from a
 * client, unmasked from a server, as RFC 6455 requires).
 */
final class WebSocketWire {

    static final String PATH = "/ws";
    private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    private static final Pattern KEY = Pattern.compile("(?im)^sec-websocket-key:\\s*(\\S+)\\s*$");
    private static final int MAX_PAYLOAD = 65536;

    final EmbeddedChannel ch;
    private final boolean server;
    private final EmbeddedChannel peerEncoder;
    private final EmbeddedChannel peerDecoder;

    private WebSocketWire(boolean server, long origin, ChannelHandler... handlers) {
        this.server = server;
        ch = new EmbeddedChannel();
        ch.freezeTime();
        ch.advanceTimeBy(Math.max(0, origin - VirtualTime.now(ch)), TimeUnit.NANOSECONDS);
        // Added to the active channel, as a server's initializer adds them to an accepted one.
        ch.pipeline().addLast(handlers);
        if (!server) {
            // A client's handshake starts on channelActive, which the handlers came too late for.
            ch.pipeline().fireChannelActive();
        }
        peerEncoder = new EmbeddedChannel(new WebSocket13FrameEncoder(server));
        peerDecoder = new EmbeddedChannel(new WebSocket13FrameDecoder(!server, false, MAX_PAYLOAD));
    }

    /** A server end: HTTP codec, aggregator, Netty's server protocol handler, then {@code after}. */
    static WebSocketWire server(WebSocketServerProtocolConfig config, ChannelHandler... after) {
        return serverAt(0, config, after);
    }

    /** A server end as {@link #server}, active when the clock reads {@code origin}. */
    static WebSocketWire serverAt(long origin, WebSocketServerProtocolConfig config, ChannelHandler... after) {
        List<ChannelHandler> handlers = new ArrayList<>(List.of(
                new HttpServerCodec(),
                new HttpObjectAggregator(MAX_PAYLOAD),
                new WebSocketServerProtocolHandler(config)));
        handlers.addAll(List.of(after));
        return new WebSocketWire(true, origin, handlers.toArray(ChannelHandler[]::new));
    }

    /** The server protocol handler's settings for {@link #PATH}, pongs passed on. */
    static WebSocketServerProtocolConfig serverConfig() {
        return WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(PATH)
                .dropPongFrames(false)
                .build();
    }

    /** A client end: HTTP codec, aggregator, Netty's client protocol handler, then {@code after}. */
    static WebSocketWire client(WebSocketClientProtocolConfig config, ChannelHandler... after) {
        List<ChannelHandler> handlers = new ArrayList<>(List.of(
                new HttpClientCodec(),
                new HttpObjectAggregator(MAX_PAYLOAD),
                new WebSocketClientProtocolHandler(config)));
        handlers.addAll(List.of(after));
        return new WebSocketWire(false, 0, handlers.toArray(ChannelHandler[]::new));
    }

    /** The client protocol handler's settings for ws://localhost/ws, pongs passed on. */
    static WebSocketClientProtocolConfig clientConfig() {
        return WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri("ws://localhost" + PATH)
                .dropPongFrames(false)
                .build();
    }

    /** Plays the peer's side of the opening handshake. */
    void handshake() {
        if (server) {
            ch.writeInbound(ascii("GET " + PATH + " HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n"));
            assertTrue(readResponseHead().startsWith("HTTP/1.1 101"), "switching protocols");
        } else {
            Matcher key = KEY.matcher(readAllOutbound());
            assertTrue(key.find(), "the client's upgrade request has a key");
            ch.writeInbound(ascii("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept(key.group(1)) + "\r\n\r\n"));
        }
    }

    /** Sends {@code frame} as the peer (taking it over). */
    void send(WebSocketFrame frame) {
        ch.writeInbound(encode(frame));
    }

    /** Bytes of {@code frame} as the peer would put them on the wire. */
    ByteBuf encode(WebSocketFrame frame) {
        peerEncoder.writeOutbound(frame);
        List<ByteBuf> parts = new ArrayList<>();
        for (ByteBuf part; (part = peerEncoder.readOutbound()) != null; ) {
            parts.add(part);
        }
        return Unpooled.wrappedBuffer(parts.toArray(ByteBuf[]::new));
    }

    /** The frames the channel wrote since the last call, decoded as the peer would. */
    List<WebSocketFrame> received() {
        for (Object out; (out = ch.readOutbound()) != null; ) {
            peerDecoder.writeInbound(out);
        }
        List<WebSocketFrame> frames = new ArrayList<>();
        for (WebSocketFrame frame; (frame = peerDecoder.readInbound()) != null; ) {
            frames.add(frame);
        }
        return frames;
    }

    /** Reads the HTTP response head the server wrote, leaving any frames after it. */
    private String readResponseHead() {
        StringBuilder text = new StringBuilder();
        while (text.indexOf("\r\n\r\n") < 0) {
            ByteBuf buf = ch.readOutbound();
            assertTrue(buf != null, "a complete response head; got " + text);
            text.append(buf.toString(StandardCharsets.US_ASCII));
            buf.release();
        }
        return text.toString();
    }

    private String readAllOutbound() {
        StringBuilder text = new StringBuilder();
        for (Object out; (out = ch.readOutbound()) != null; ) {
            ByteBuf buf = (ByteBuf) out;
            text.append(buf.toString(StandardCharsets.US_ASCII));
            buf.release();
        }
        return text.toString();
    }

    private static ByteBuf ascii(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII);
    }

    private static String accept(String key) {
        try {
            byte[] sha1 = MessageDigest.getInstance("SHA-1").digest((key + GUID).getBytes(StandardCharsets.US_ASCII));
            return Base64.getEncoder().encodeToString(sha1);
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
