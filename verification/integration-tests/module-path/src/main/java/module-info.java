/**
 * A user of wheelbeat on the module path: it requires the two library modules by name and sees
 * only what their descriptors export. It brings Micrometer, which wheelbeat requires only
 * statically, to give a handler a meter registry.
 */
module io.wheelbeat.integration.modulepath {
    requires io.wheelbeat.netty;
    requires io.wheelbeat.core;
    requires micrometer.core;

    exports io.wheelbeat.integration.modulepath;
}
