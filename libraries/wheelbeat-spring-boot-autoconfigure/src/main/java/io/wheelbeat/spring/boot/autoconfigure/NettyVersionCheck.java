package io.wheelbeat.spring.boot.autoconfigure;

import io.netty.util.Version;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the application should hear at start-up about its Netty: a version older than the oldest
 * wheelbeat supports (4.1.128), and {@code wheelbeat.loop.enabled} on Netty 4.1 (the wheel loop
 * group needs Netty 4.2; everything else works on 4.1). Logged once, at WARN.
 */
final class NettyVersionCheck {

    private static final Logger log = LoggerFactory.getLogger(NettyVersionCheck.class);
    /** The oldest Netty wheelbeat supports, as major, minor, micro. */
    private static final int[] OLDEST_SUPPORTED = {4, 1, 128};

    private final List<String> warnings;

    NettyVersionCheck(String nettyVersion, boolean loopEnabled) {
        this.warnings = warnings(nettyVersion, loopEnabled);
    }

    /** The check of the Netty on the class path ({@code netty-common}'s version). */
    static NettyVersionCheck ofRunningNetty(boolean loopEnabled) {
        Version common =
                Version.identify(NettyVersionCheck.class.getClassLoader()).get("netty-common");
        return new NettyVersionCheck(common == null ? "unknown" : common.artifactVersion(), loopEnabled);
    }

    List<String> warnings() {
        return warnings;
    }

    void log() {
        warnings.forEach(log::warn);
    }

    private static List<String> warnings(String version, boolean loopEnabled) {
        List<String> warnings = new ArrayList<>();
        int[] parts = parse(version);
        if (parts == null) {
            return warnings; // a build without a readable version: nothing reliable to say
        }
        if (compare(parts, OLDEST_SUPPORTED) < 0) {
            warnings.add("Netty " + version + " is older than 4.1.128.Final, the oldest wheelbeat supports:"
                    + " set the property netty.version (Spring Boot's dependency management) to 4.1.128.Final"
                    + " or newer");
        }
        if (loopEnabled && compare(parts, new int[] {4, 2, 0}) < 0) {
            warnings.add("wheelbeat.loop.enabled needs Netty 4.2 (found " + version + "): Reactor Netty keeps its own"
                    + " event loops; the wheelbeat.server.* and wheelbeat.client.* handlers work as set");
        }
        return warnings;
    }

    /** {@code 4.1.128.Final} as {4, 1, 128}; null when it does not start with three numbers. */
    static int[] parse(String version) {
        String[] fields = version.split("[.\\-]", 4);
        if (fields.length < 3) {
            return null;
        }
        int[] parts = new int[3];
        try {
            for (int i = 0; i < 3; i++) {
                parts[i] = Integer.parseInt(fields[i]);
            }
        } catch (NumberFormatException e) {
            return null;
        }
        return parts;
    }

    private static int compare(int[] a, int[] b) {
        for (int i = 0; i < 3; i++) {
            if (a[i] != b[i]) {
                return Integer.compare(a[i], b[i]);
            }
        }
        return 0;
    }
}
