package io.wheelbeat.spring.boot.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What the start-up check says for each Netty version, and what it reads from a version string. */
class NettyVersionCheckTest {

    @Test
    void boot35sNetty4_1_121IsBelowTheSupportedRange() {
        List<String> warnings = new NettyVersionCheck("4.1.121.Final", false).warnings();
        assertEquals(1, warnings.size());
        assertTrue(warnings.get(0).startsWith("Netty 4.1.121.Final is older than 4.1.128.Final"), warnings.get(0));
    }

    @Test
    void supportedVersionsWithoutTheLoopSayNothing() {
        for (String version :
                new String[] {"4.1.128.Final", "4.1.137.Final", "4.2.0.Final", "4.2.18.Final", "5.0.0.Alpha2"}) {
            assertEquals(List.of(), new NettyVersionCheck(version, false).warnings(), version);
        }
    }

    @Test
    void theLoopOnNetty41SaysItNeedsNetty42() {
        List<String> warnings = new NettyVersionCheck("4.1.128.Final", true).warnings();
        assertEquals(1, warnings.size());
        assertTrue(
                warnings.get(0).startsWith("wheelbeat.loop.enabled needs Netty 4.2 (found 4.1.128.Final)"),
                warnings.get(0));
        assertEquals(List.of(), new NettyVersionCheck("4.2.15.Final", true).warnings());
        assertEquals(2, new NettyVersionCheck("4.1.100.Final", true).warnings().size());
    }

    @Test
    void unreadableVersionsSayNothingRatherThanGuess() {
        assertNull(NettyVersionCheck.parse("unknown"));
        assertNull(NettyVersionCheck.parse("4.1"));
        assertNull(NettyVersionCheck.parse("4.x.1"));
        assertEquals(List.of(), new NettyVersionCheck("unknown", true).warnings());
        assertArrayEquals(new int[] {4, 1, 128}, NettyVersionCheck.parse("4.1.128.Final"));
        assertArrayEquals(new int[] {4, 2, 0}, NettyVersionCheck.parse("4.2.0-SNAPSHOT"));
    }
}
