const char *greeting(void);
