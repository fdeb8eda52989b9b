package io.wheelbeat.core.apicheck.internal;

/** An internal type, for {@code ExportedApiTest}: public, but in a package with an internal segment. */
public class Engine {

    /** An internal interface. */
    public interface Part {}

    /** An internal exception. */
    public static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;
    }
}
