/* The PostgreSQL store: public interface of layer 2. */
#ifndef CAPLEDGER_STORE_H
#define CAPLEDGER_STORE_H
#endif
