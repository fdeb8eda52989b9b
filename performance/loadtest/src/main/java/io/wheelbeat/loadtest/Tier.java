package io.wheelbeat.loadtest;

/** Where the connections live. Every report is labelled with its tier. */
enum Tier {
    /**
     * One JVM: the real server pipeline and event loops, reached through Netty's local transport
     * (no file descriptors). Its connections are simulated, never TCP connections.
     */
    LOCAL("local", "simulated connections over Netty's local transport (one JVM, no sockets)"),
    /** Real sockets on the loopback interface, the client side in a separate process. */
    TCP("tcp", "TCP connections over loopback (client in a separate process)");

    private final String id;
    private final String description;

    Tier(String id, String description) {
        this.id = id;
        this.description = description;
    }

    String id() {
        return id;
    }

    /** What a connection of this tier is, for report headings. */
    String description() {
        return description;
    }

    @Override
    public String toString() {
        return id;
    }
}
