/**
 * The agent protocol: everything the server and its node agents exchange (docs/architecture.md, "Agent protocol"),
 * one definition for both ends. Registration ({@link RegisterRequest},
 * {@link Registration}), reports ({@link NodeReport},
 * {@link ReportResponse}), the desired state with its launches and grants, the JSON form
 * ({@link ProtocolJson}) and the transport's certificate files
 * ({@link PemCertificates}).
 *
 * <p>Records here check their own fields and offer plain views of them; nothing reads the machine, the catalog or
 * the clock. The server imports nothing else of the agent module but what starts the demo's in-process agents.
 */
package io.gpupool.agent.protocol;
