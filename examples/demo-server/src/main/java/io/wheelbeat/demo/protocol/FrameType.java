package io.wheelbeat.demo.protocol;

/** The four frame types of the demo wire protocol, with their codes on the wire. */
public enum FrameType {
    /** A heartbeat; the payload is the sender's 8-byte ping id, echoed in the PONG. */
    PING(1),
    /** The answer to a PING, carrying the PING's payload. */
    PONG(2),
    /** Application data; the server echoes it. */
    DATA(3),
    /**
     * The sender is about to close; the payload is a 4-byte reconnect window in milliseconds
     * (unsigned; 0 for none), then a UTF-8 reason.
     */
    GOODBYE(4);

    private static final FrameType[] BY_CODE = {null, PING, PONG, DATA, GOODBYE};

    private final int code;

    FrameType(int code) {
        this.code = code;
    }

    /** Returns the code written on the wire. */
    public int code() {
        return code;
    }

    /** Returns the type of {@code code}, or null if no type has it. */
    public static FrameType ofCode(int code) {
        return code > 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
