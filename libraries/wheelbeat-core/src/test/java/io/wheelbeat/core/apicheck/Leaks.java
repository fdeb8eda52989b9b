package io.wheelbeat.core.apicheck;

import io.wheelbeat.core.apicheck.internal.Engine;
import java.util.List;
import java.util.Map;

/** Public types that show hidden ones, one way each, for {@code ExportedApiTest}. */
public final class Leaks {

    private Leaks() {}

    /** Shows nothing hidden. */
    public interface Clean extends Comparable<Clean> {
        /** @return names */
        List<String> names();
    }

    /** A hidden type two steps up its superinterfaces. */
    public interface ThroughASuperinterface extends Step {}

    interface Step extends Engine.Part {}

    /** A package-private superclass. */
    public static class ExtendsAHiddenClass extends Base {}

    static class Base {}

    /** An internal type as a supertype's type argument. */
    public abstract static class InATypeArgument implements Comparable<Engine> {}

    /** An internal type as a type parameter's bound. */
    public static final class Bounded<T extends Engine> {}

    /** Hidden types in members' signatures. */
    public static final class Signatures {
        /** A non-public field type. */
        public Base base;

        /** @param engines an internal type as a generic array argument */
        public Signatures(Map<String, Engine[]> engines) {}

        /** @return an internal type in a wildcard */
        public List<? extends Engine> returned() {
            return List.of();
        }

        /** @throws Engine.Failure an internal exception */
        public void thrown() throws Engine.Failure {}

        /** @param <T> bounded by an internal type */
        public <T extends Engine.Part> void bounded() {}

        /** Not visible: not checked. */
        void packagePrivate(Engine engine) {}
    }
}
