package io.wheelbeat.integration;

/**
 * The Netty line a test module is for, from the system property {@code wheelbeat.it.netty-line}
 * its pom sets, checked against the Netty on the class path: a module that means to test Netty 4.1
 * and silently runs on 4.2 (or the reverse) fails instead. This module has no Netty of its own:
 * the caller passes {@code Version.identify().get("netty-common").artifactVersion()}.
 */
public final class NettyLine {

    private NettyLine() {}

    /** Throws unless {@code netty}, the version on the class path, is of the module's line. */
    public static void assertIsTheModulesLine(String netty) {
        String line = System.getProperty("wheelbeat.it.netty-line");
        if (line == null || !netty.startsWith(line + ".")) {
            throw new AssertionError("Netty " + netty + ", expected " + line + ".x");
        }
    }
}
