/**
 * Moving memberlist's bytes: the {@link dev.fencing.memberlist.transport.Transport} seam (datagrams plus
 * one-message streams on one address), implemented for production by
 * {@link dev.fencing.memberlist.transport.NioTransport} (UDP and TCP on the same port) and by the simulator's
 * in-memory network. Framing, encryption and compression live in the codec package, above this one.
 */
package dev.fencing.memberlist.transport;
