/**
 * The agent protocol: everything the server and its node agents exchange (docs/architecture.md, "Agent protocol"),
 * one definition for both ends. Registration ({@link RegisterRequest},
 * {@link Registration}), reports ({@link NodeReport},
 * {@link ReportResponse}), the desired state with its launches and grants, the JSON form
 * ({@link ProtocolJson}) and the transport's certificate files
 * ({@link PemCertificates}).
 *
 * <p>The records here check their own fields and offer plain views of them (nothing asks the machine, the GPU catalog
 * or the clock); the one reader is {@link PemCertificates}, for the certificate files both ends are given. The server
 * imports nothing else of the agent module but what starts the demo's in-process agents.
 */
package io.gpupool.agent.protocol;
