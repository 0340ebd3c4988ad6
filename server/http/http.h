/* HTTP layer: public interface of layer 3. */
#ifndef CAPLEDGER_HTTP_H
#define CAPLEDGER_HTTP_H
#endif
