package io.wheelbeat.demo.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.TooLongFrameException;
import org.junit.jupiter.api.Test;

class FrameCodecTest {

    private final EmbeddedChannel channel = new EmbeddedChannel(new FrameDecoder(16), FrameEncoder.INSTANCE);

    @Test
    void encodedFrameDecodesToTheSameTypeAndPayload() {
        assertTrue(channel.writeOutbound(Frame.ping(42)));
        ByteBuf wire = channel.readOutbound();
        assertEquals(FrameDecoder.HEADER_BYTES + 8, wire.readableBytes());
        assertTrue(channel.writeInbound(wire));
        Frame frame = channel.readInbound();
        assertEquals(FrameType.PING, frame.type());
        assertEquals(42, frame.pingId());
        frame.release();
    }

    @Test
    void goodbyeCarriesItsReconnectWindowThenItsReason() {
        EmbeddedChannel wide = new EmbeddedChannel(new FrameDecoder(64), FrameEncoder.INSTANCE);
        assertTrue(wide.writeOutbound(Frame.goodbye("server shutting down", Frame.MAX_RECONNECT_WINDOW_MILLIS)));
        ByteBuf wire = wide.readOutbound();
        assertEquals(0xFFFF_FFFFL, wire.getUnsignedInt(FrameDecoder.HEADER_BYTES), "4 bytes of window first");
        assertTrue(wide.writeInbound(wire));
        Frame frame = wide.readInbound();
        assertEquals("server shutting down", frame.goodbyeReason());
        assertEquals(Frame.MAX_RECONNECT_WINDOW_MILLIS, frame.reconnectWindowMillis());
        frame.release();
        Frame plain = Frame.goodbye("bye");
        assertEquals(0, plain.reconnectWindowMillis());
        assertEquals("bye", plain.goodbyeReason());
        plain.release();
        assertThrows(IllegalArgumentException.class, () -> Frame.goodbye("x", -1));
        assertThrows(IllegalArgumentException.class, () -> Frame.goodbye("x", Frame.MAX_RECONNECT_WINDOW_MILLIS + 1));
    }

    @Test
    void aGoodbyeTooShortForAWindowHasNoWindowAndNoReason() {
        Frame runt = new Frame(FrameType.GOODBYE, Unpooled.wrappedBuffer(new byte[] {1, 2}));
        assertEquals(0, runt.reconnectWindowMillis());
        assertEquals("", runt.goodbyeReason());
        runt.release();
    }

    @Test
    void frameSplitAcrossReadsIsReassembled() {
        ByteBuf wire = Unpooled.buffer().writeByte(3).writeInt(5).writeBytes("hello".getBytes());
        assertFalse(channel.writeInbound(wire.readRetainedSlice(3)));
        assertFalse(channel.writeInbound(wire.readRetainedSlice(4)));
        assertTrue(channel.writeInbound(wire.readRetainedSlice(3)));
        wire.release();
        Frame frame = channel.readInbound();
        assertEquals("hello", frame.text());
        frame.release();
    }

    @Test
    void severalFramesInOneReadAllDecode() {
        ByteBuf wire = Unpooled.buffer().writeByte(1).writeInt(0).writeByte(2).writeInt(0);
        channel.writeInbound(wire);
        Frame first = channel.readInbound();
        Frame second = channel.readInbound();
        assertEquals(FrameType.PING, first.type());
        assertEquals(FrameType.PONG, second.type());
        assertNull(channel.readInbound());
        first.release();
        second.release();
    }

    @Test
    void unknownTypeIsACorruptedFrame() {
        ByteBuf wire = Unpooled.buffer().writeByte(9).writeInt(0);
        DecoderException e = assertThrows(DecoderException.class, () -> channel.writeInbound(wire));
        assertTrue(e instanceof CorruptedFrameException, e.toString());
    }

    @Test
    void payloadAboveTheMaximumIsRejectedFromTheHeaderAlone() {
        ByteBuf header = Unpooled.buffer().writeByte(3).writeInt(17);
        DecoderException e = assertThrows(DecoderException.class, () -> channel.writeInbound(header));
        assertTrue(e instanceof TooLongFrameException, e.toString());
    }

    @Test
    void lengthWithTheHighBitSetIsTooLongNotNegative() {
        ByteBuf header = Unpooled.buffer().writeByte(3).writeInt(-1);
        DecoderException e = assertThrows(DecoderException.class, () -> channel.writeInbound(header));
        assertTrue(e instanceof TooLongFrameException, e.toString());
    }

    @Test
    void bytesAfterAMalformedFrameAreDiscarded() {
        ByteBuf wire = Unpooled.buffer().writeByte(9).writeInt(0).writeByte(1).writeInt(0);
        assertThrows(DecoderException.class, () -> channel.writeInbound(wire));
        channel.writeInbound(Unpooled.buffer().writeByte(1).writeInt(0));
        assertNull(channel.readInbound());
    }

    @Test
    void negativeMaximumIsRejected() {
        assertThrows(IllegalArgumentException.class, () -> new FrameDecoder(-1));
    }
}
