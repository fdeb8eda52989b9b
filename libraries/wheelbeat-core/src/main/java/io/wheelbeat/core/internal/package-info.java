/** Not API: the drivers' shared machinery, exported only to wheelbeat's own modules. */
package io.wheelbeat.core.internal;
